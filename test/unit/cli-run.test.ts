// rekindle run's end: the closing line CI reads (with the skips counted), --fail-on-skip (run and
// merge), --node-selector with its old spelling; and the JSON of the fault commands.
import { expect } from "chai";
import { finishRun, runResultText } from "../../lib/cli/run-result.js";
import { mergedExitCode } from "../../lib/cli/merge-command.js";
import { railsRequest } from "../../lib/run/run-rails.js";
import { faultJson, reapReportJson } from "../../lib/cli/fault-json.js";
import { RekindleError } from "../../lib/errors.js";
import type { FaultRecord } from "../../lib/fault/types.js";
import type { RunResult } from "../../lib/run/runner.js";
import { cli } from "../support/cli-capture.js";
import { startFakeApiServer } from "../support/fake-apiserver.js";
import { runSummary, scenario, scenarioRun, window } from "../support/summaries.js";

const READY = "deployment:recovered";

function result(skipped: { id: string; reason: string }[], failed = 0): RunResult {
  const summary = runSummary([
    scenario("node-loss/x", [scenarioRun({ [READY]: 20_000 }, 20_000)], [window(READY)]),
  ]);
  return { summary: { ...summary, skipped }, reportDir: "/tmp/reports/r", failed };
}

/** Runs `f` with stdout and stderr captured. */
function captured(f: () => number): { code: number; stdout: string; stderr: string } {
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  let stdout = "";
  let stderr = "";
  process.stdout.write = (chunk: string | Uint8Array) => ((stdout += chunk.toString()), true);
  process.stderr.write = (chunk: string | Uint8Array) => ((stderr += chunk.toString()), true);
  try {
    return { code: f(), stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

const SKIP = { id: "pressure/memory", reason: "pressure faults: not implemented for kind" };

describe("rekindle run's closing line and --fail-on-skip", function () {
  it("the closing line is `scenarios: N passed, N failed`, then `, N skipped` when a scenario was skipped", function () {
    expect(runResultText(result([])).trimEnd().split("\n").at(-1)).to.equal("scenarios: 1 passed, 0 failed");
    expect(
      runResultText(result([SKIP]))
        .trimEnd()
        .split("\n")
        .at(-1),
    ).to.equal("scenarios: 1 passed, 0 failed, 1 skipped");
    expect(runResultText(result([SKIP, { ...SKIP, id: "pressure/disk" }]))).to.match(
      /\nscenarios: 1 passed, 0 failed, 2 skipped\n$/,
    );
  });

  it("skips do not fail a run; with --fail-on-skip they exit 1, saying so on stderr", function () {
    expect(captured(() => finishRun(result([SKIP]), "text")).code).to.equal(0);
    expect(captured(() => finishRun(result([SKIP]), "text", { failOnSkip: false })).code).to.equal(0);
    const failing = captured(() => finishRun(result([SKIP]), "text", { failOnSkip: true }));
    expect(failing.code).to.equal(1);
    expect(failing.stderr).to.equal("--fail-on-skip: 1 scenario was skipped\n");
    expect(captured(() => finishRun(result([]), "text", { failOnSkip: true })).code).to.equal(0);
    // A failure is still a failure, and a broken harness still 3.
    expect(captured(() => finishRun(result([], 1), "json", { failOnSkip: true })).code).to.equal(1);
    const broken = { ...result([SKIP]), harnessError: new RekindleError("HARNESS_FAILED", "x") };
    expect(captured(() => finishRun(broken, "text", { failOnSkip: true })).code).to.equal(3);
  });

  it("merge judges the merged run the same way", function () {
    const { summary } = result([SKIP]);
    expect(mergedExitCode(summary)).to.equal(0);
    expect(mergedExitCode(summary, true)).to.equal(1);
    expect(mergedExitCode({ ...summary, skipped: [] }, true)).to.equal(0);
  });

  it("run, merge and the help name --fail-on-skip", async function () {
    expect((await cli(["run", "--help"])).stdout)
      .to.include("[--fail-on-skip]")
      .and.include("--fail-on-skip: a run");
    expect((await cli(["merge", "--help"])).stdout).to.include("[--fail-on-skip]");
  });
});

describe("--node-selector on every command (run keeps --nodes-selector as its old spelling)", function () {
  it("run takes --node-selector, and --nodes-selector as the same flag", function () {
    expect(railsRequest({ "allow-faults": true, "node-selector": "pool=chaos" })).to.deep.equal({
      allowFaults: true,
      selector: "pool=chaos",
    });
    expect(railsRequest({ "allow-faults": true, "nodes-selector": "pool=chaos" })).to.deep.equal({
      allowFaults: true,
      selector: "pool=chaos",
    });
    expect(railsRequest({ "node-selector": "a=b", "nodes-selector": "a=b" })?.selector).to.equal("a=b");
    expect(() => railsRequest({ "node-selector": "a=b", "nodes-selector": "c=d" }))
      .to.throw(RekindleError, "--node-selector a=b and --nodes-selector c=d differ")
      .with.property("code", "INVALID_INPUT");
  });

  it("every usage spells it --node-selector; run's names the old spelling once", async function () {
    const run = (await cli(["run", "--help"])).stdout;
    expect(run).to.include("(--node-selector k=v | --nodes a,b)");
    expect(run.match(/--nodes-selector/g)).to.have.length(1);
    expect(run).to.include("--nodes-selector is its old spelling");
    for (const path of [["controller"], ["node"], ["up"], ["down"], ["list"], ["reap"]])
      expect((await cli([...path, "--help"])).stdout, path.join(" ")).to.not.include("--nodes-selector");
  });

  it("a rails flag without --allow-faults names --node-selector", async function () {
    const api = await startFakeApiServer({});
    try {
      const { code, stderr } = await cli([
        "run",
        "--provider",
        "existing",
        "--kubeconfig",
        api.kubeconfigPath,
        "--nodes-selector",
        "pool=x",
      ]);
      expect(code).to.equal(2);
      expect(stderr).to.include("--node-selector, --nodes").and.not.include("--nodes-selector");
    } finally {
      await api.close();
    }
  });
});

describe("the fault commands' JSON", function () {
  const record: FaultRecord = {
    id: "fault-1",
    runId: "verb-20260101",
    action: { kind: "pressure", pressure: "memory" },
    nodes: [
      { name: "w1", state: "applied", at: "2026-01-01T00:00:00.000Z" },
      { name: "w2", state: "reverted", at: "2026-01-01T00:00:01.000Z" },
    ],
    appliedAt: "2026-01-01T00:00:00.000Z",
    deadline: "2026-01-01T01:00:00.000Z",
    locator: { provider: "sim", root: "/tmp/sim/rekindle" },
    holder: { host: "h", pid: 1, command: "rekindle node pressure" },
  };

  it("names a record by id, run, action, faulted nodes and times, never its locator", function () {
    const json = faultJson(record);
    expect(json).to.deep.equal({
      id: "fault-1",
      runId: "verb-20260101",
      action: "memory pressure",
      nodes: ["w1"],
      appliedAt: "2026-01-01T00:00:00.000Z",
      deadline: "2026-01-01T01:00:00.000Z",
      command: "rekindle node pressure",
    });
    expect(
      reapReportJson({
        entries: [{ record, outcome: "held", reason: "another host's run" }],
        unreadable: [{ name: "cm-x", reason: "not JSON" }],
      }),
    ).to.deep.equal({
      faults: [{ ...json, outcome: "held", reason: "another host's run" }],
      unreadable: [{ name: "cm-x", reason: "not JSON" }],
    });
  });
});
