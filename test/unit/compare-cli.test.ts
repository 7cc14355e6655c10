import { expect } from "chai";
import { dirname } from "node:path";
import { runSummary, scenario, scenarioRun, window, writeSummaries } from "../support/summaries.js";
import { cli } from "../support/cli-capture.js";

const READY = "deployment:recovered";

function summaryAt(ready: number, fields: Parameters<typeof runSummary>[1] = {}) {
  return runSummary(
    [scenario("node-loss/x", [scenarioRun({ [READY]: ready }, ready)], [window(READY)])],
    fields,
  );
}

describe("rekindle compare (command line)", function () {
  it("exits 0 on no regression, 1 on one, and takes report directories too", async function () {
    const [base = "", same = "", slow = ""] = writeSummaries([
      summaryAt(20_000),
      summaryAt(20_500),
      summaryAt(30_000),
    ]);
    const pass = await cli(["compare", base, dirname(same)]);
    expect(pass.code).to.equal(0);
    expect(pass.stdout).to.include("PASS");
    const fail = await cli(["compare", dirname(base), slow, "--max-regression", "20%"]);
    expect(fail.code).to.equal(1);
    expect(fail.stdout).to.match(/node-loss\/x\s+recovery\s+p50\s+20\.0s\s+30\.0s\s+\+50\.0%\s+REGRESSION/);
    expect((await cli(["compare", base, slow, "--max-regression", "60%"])).code).to.equal(0);
  });

  for (const [what, fields, named] of [
    ["provider", { provider: "sim" }, "provider"],
    ["profile", { profile: "default" }, "profile"],
    ["schema version", { schemaVersion: 2 }, "schemaVersion"],
  ] as const) {
    it(`refuses runs of a different ${what} (exit 2 naming it and --allow-mismatch); with the flag, compares and warns`, async function () {
      const [base = "", other = ""] = writeSummaries([summaryAt(20_000), summaryAt(20_000, fields)]);
      const refused = await cli(["compare", base, other]);
      expect(refused.code).to.equal(2);
      expect(refused.stderr).to.include(named).and.include("--allow-mismatch").and.include(other);
      expect(refused.stdout).to.equal("");
      const allowed = await cli(["compare", base, other, "--allow-mismatch"]);
      expect(allowed.code).to.equal(0);
      expect(allowed.stderr).to.match(
        new RegExp(`^warning: comparing runs that differ in ${named} .*--allow-mismatch`, "m"),
      );
      expect(allowed.stdout).to.include("PASS");
    });
  }

  it("treats a summary without schemaVersion as version 1", async function () {
    const [v1 = "", explicit = ""] = writeSummaries([
      summaryAt(20_000),
      summaryAt(20_000, { schemaVersion: 1 }),
    ]);
    expect((await cli(["compare", v1, explicit])).code).to.equal(0);
  });

  it("-o json prints the rows and the verdict as JSON on stdout", async function () {
    const [base = "", slow = ""] = writeSummaries([
      summaryAt(20_000),
      runSummary([
        scenario("node-loss/x", [scenarioRun({ [READY]: 30_000 }, 30_000)], [window(READY)]),
        scenario("node-loss/new", [scenarioRun({}, 1_000)]),
      ]),
    ]);
    const { code, stdout } = await cli(["compare", base, slow, "-o", "json"]);
    expect(code).to.equal(1);
    const parsed = JSON.parse(stdout) as {
      verdict: string;
      failures: Record<string, number>;
      baseline: { path: string; schemaVersion: number };
      rows: Record<string, unknown>[];
    };
    expect(parsed.verdict).to.equal("fail");
    expect(parsed.failures).to.deep.equal({ regression: 2, missing: 1 });
    expect(parsed.baseline).to.deep.include({ path: base, schemaVersion: 1 });
    expect(parsed.rows).to.deep.include({
      scenario: "node-loss/x",
      milestone: "recovery",
      statistic: "p50",
      baseline: 20_000,
      new: 30_000,
      change: 0.5,
      verdict: "regression",
    });
    expect(parsed.rows).to.deep.include({
      scenario: "node-loss/new",
      milestone: null,
      statistic: "presence",
      baseline: null,
      new: null,
      change: null,
      verdict: "missing",
      note: "not in the baseline",
    });
  });

  it("bad input exits 2 naming it: an -o format, a missing file, a file that is not a summary, one path", async function () {
    const [good = "", foreign = "", notJson = ""] = writeSummaries([summaryAt(1), '{"name":"x"}', "{"]);
    const badFormat = await cli(["compare", good, good, "-o", "yaml"]);
    expect(badFormat.code).to.equal(2);
    expect(badFormat.stderr).to.include('"yaml"').and.include("text, json");
    const missing = await cli(["compare", good, "/no/such/summary.json"]);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.include("/no/such/summary.json");
    const notSummary = await cli(["compare", good, foreign]);
    expect(notSummary.code).to.equal(2);
    expect(notSummary.stderr).to.include(`${foreign} is not a rekindle summary.json`);
    expect((await cli(["compare", good, notJson])).stderr).to.include(
      `${notJson} is not a rekindle summary.json`,
    );
    const one = await cli(["compare", good]);
    expect(one.code).to.equal(2);
    expect(one.stderr).to.include("takes two summary.json paths");
  });

  it("--help prints the usage and exits 0", async function () {
    const { code, stdout } = await cli(["compare", "--help"]);
    expect(code).to.equal(0);
    expect(stdout)
      .to.include("rekindle compare <baseline")
      .and.include("--allow-mismatch")
      .and.include("-o text|json");
  });
});
