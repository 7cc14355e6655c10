import { expect } from "chai";
import { compareSummaries, parsePercent, type ComparisonRow } from "../../lib/report/compare.js";
import { formatComparison } from "../../lib/report/compare-format.js";
import { RekindleError } from "../../lib/errors.js";
import { runSummary, scenario, scenarioRun, window } from "../support/summaries.js";

const READY = "deployment:recovered";

/** One scenario, one run: `deployment:recovered` at `ready`, recovery at `recovery`. */
function single(recovery: number | null, ready: number) {
  return runSummary([scenario("node-loss/x", [scenarioRun({ [READY]: ready }, recovery)], [window(READY)])]);
}

function row(rows: readonly ComparisonRow[], milestone: string | null, statistic = "p50") {
  return rows.find((r) => r.milestone === milestone && r.statistic === statistic);
}

describe("compare: times", function () {
  it("flags a slowdown beyond the threshold and prints it as a line of its own", function () {
    const comparison = compareSummaries(single(20_000, 20_000), single(26_000, 21_000), {
      maxRegression: 0.2,
    });
    expect(row(comparison.rows, "recovery")).to.deep.include({
      verdict: "regression",
      baseline: 20_000,
      new: 26_000,
    });
    expect(row(comparison.rows, READY)).to.deep.include({ verdict: "ok" });
    expect(comparison.verdict).to.equal("fail");
    expect(comparison.failures).to.deep.equal({ regression: 1 });
    const text = formatComparison(comparison);
    expect(text).to.match(/node-loss\/x\s+recovery\s+p50\s+20\.0s\s+26\.0s\s+\+30\.0%\s+REGRESSION/);
    expect(text).to.include("FAIL: 1 regression");
  });

  it("a recovery lost in the new run is a regression", function () {
    const comparison = compareSummaries(single(20_000, 20_000), single(null, 20_000));
    expect(row(comparison.rows, "recovery")).to.deep.include({ verdict: "regression", new: null });
    expect(comparison.verdict).to.equal("fail");
  });

  it("keeps the 1 s noise floor: +50 % of 1 s is not a regression", function () {
    const comparison = compareSummaries(single(1_000, 1_000), single(1_500, 1_500), { maxRegression: 0.2 });
    expect(comparison.rows.every((r) => r.verdict === "ok")).to.equal(true);
    expect(comparison.verdict).to.equal("pass");
    expect(formatComparison(comparison)).to.include("PASS: no regression beyond 20.0%");
  });

  it("compares p90 where both runs repeated, with the same threshold", function () {
    // Same p50 (20 s); the new run's worst repeat is 30 s against 21 s.
    const repeated = (slowest: number) =>
      runSummary([
        scenario(
          "node-loss/x",
          [10_000, 20_000, slowest].map((t) => scenarioRun({ [READY]: t }, t)),
          [window(READY)],
        ),
      ]);
    const comparison = compareSummaries(repeated(21_000), repeated(30_000));
    expect(row(comparison.rows, READY, "p50")).to.deep.include({
      verdict: "ok",
      baseline: 20_000,
      new: 20_000,
    });
    expect(row(comparison.rows, READY, "p90")).to.deep.include({
      verdict: "regression",
      baseline: 21_000,
      new: 30_000,
    });
    expect(row(comparison.rows, "recovery", "p90")).to.deep.include({ verdict: "regression" });
    expect(comparison.failures).to.deep.equal({ regression: 2 });
  });

  it("has no p90 row when either side ran once", function () {
    const repeated = runSummary([
      scenario("node-loss/x", [
        scenarioRun({ [READY]: 20_000 }, 20_000),
        scenarioRun({ [READY]: 20_000 }, 20_000),
      ]),
    ]);
    const comparison = compareSummaries(single(20_000, 20_000), repeated);
    expect(comparison.rows.filter((r) => r.statistic === "p90")).to.deep.equal([]);
  });

  it("parses --max-regression and rejects nonsense", function () {
    expect(parsePercent("20%")).to.equal(0.2);
    expect(parsePercent("12.5")).to.equal(0.125);
    expect(() => parsePercent("lots")).to.throw(RekindleError, /--max-regression/);
  });
});

describe("compare: nothing missing in silence", function () {
  it("a scenario on one side only fails, named, whichever side lacks it", function () {
    const both = [scenario("a", [scenarioRun({}, 1_000)]), scenario("b", [scenarioRun({}, 1_000)])];
    const onlyA = [scenario("a", [scenarioRun({}, 1_000)])];
    const fewer = compareSummaries(
      runSummary(both),
      runSummary(onlyA, { skipped: [{ id: "b", reason: "needs docker" }] }),
    );
    expect(fewer.verdict).to.equal("fail");
    expect(fewer.rows.find((r) => r.scenario === "b")).to.deep.include({
      milestone: null,
      verdict: "missing",
      note: "not in the new run (skipped: needs docker)",
    });
    const more = compareSummaries(runSummary(onlyA), runSummary(both));
    expect(more.rows.find((r) => r.scenario === "b")).to.deep.include({
      verdict: "missing",
      note: "not in the baseline",
    });
    expect(formatComparison(more)).to.match(/^b\s+—\s+presence.*MISSING \(not in the baseline\)$/m);
  });

  it("an expected milestone missing on either side fails, each named", function () {
    const expected = [window("node-not-ready"), window(READY)];
    const base = runSummary([
      scenario("s", [scenarioRun({ "node-not-ready": 5_000, [READY]: 9_000 })], expected),
    ]);
    const cur = runSummary([scenario("s", [scenarioRun({ [READY]: 9_000 })], expected)]);
    const lost = compareSummaries(base, cur);
    expect(row(lost.rows, "node-not-ready", "presence")).to.deep.include({
      verdict: "missing",
      baseline: 5_000,
      new: null,
      note: "expected to happen; missing in the new run",
    });
    expect(lost.verdict).to.equal("fail");
    const gained = compareSummaries(cur, base);
    expect(row(gained.rows, "node-not-ready", "presence")?.note).to.equal(
      "expected to happen; missing in the baseline",
    );
    // Expected by the windows, recorded by neither run: still named.
    const neither = compareSummaries(cur, cur);
    expect(row(neither.rows, "node-not-ready", "presence")?.note).to.equal(
      "expected to happen; missing on both sides",
    );
  });

  it("a null time in the file (NaN when written) counts as missing", function () {
    const base = runSummary([scenario("s", [scenarioRun({ [READY]: 9_000 })], [window(READY)])]);
    const cur = JSON.parse(JSON.stringify(base)) as typeof base;
    const milestone = cur.scenarios[0]?.milestones.find((m) => m.name === READY);
    if (milestone) milestone.atMs = Number.NaN;
    expect(
      row(compareSummaries(base, JSON.parse(JSON.stringify(cur)) as typeof cur).rows, READY, "presence"),
    ).to.deep.include({
      verdict: "missing",
    });
  });

  it("a must-not-happen milestone absent on both sides is fine; happening in the new run fails", function () {
    const expected = [window("taint-added:node.kubernetes.io/out-of-service", null), window(READY)];
    const clean = runSummary([scenario("s", [scenarioRun({ [READY]: 9_000 })], expected)]);
    const ok = compareSummaries(clean, clean);
    expect(ok.verdict).to.equal("pass");
    expect(ok.rows.map((r) => r.milestone)).to.deep.equal([READY]);
    const tainted = runSummary([
      scenario(
        "s",
        [scenarioRun({ [READY]: 9_000, "taint-added:node.kubernetes.io/out-of-service": 4_000 })],
        expected,
      ),
    ]);
    const bad = compareSummaries(clean, tainted);
    expect(row(bad.rows, "taint-added:node.kubernetes.io/out-of-service", "presence")).to.deep.include({
      verdict: "unexpected",
    });
    expect(bad.verdict).to.equal("fail");
    // The other way round: gone as it should be.
    expect(compareSummaries(tainted, clean).rows.find((r) => r.verdict !== "ok")).to.equal(undefined);
  });

  it("a milestone with no window seen on one side only is noted, not failed", function () {
    const base = runSummary([
      scenario("s", [scenarioRun({ [READY]: 9_000, "event:NodeNotReady": 3_000 })], [window(READY)]),
    ]);
    const cur = runSummary([scenario("s", [scenarioRun({ [READY]: 9_000 })], [window(READY)])]);
    const comparison = compareSummaries(base, cur);
    expect(row(comparison.rows, "event:NodeNotReady", "presence")).to.deep.include({
      verdict: "noted",
      note: "only in the baseline (no expected window)",
    });
    expect(comparison.verdict).to.equal("pass");
  });

  it("a new run whose harness broke (schema 2's run-level error) fails, saying what broke", function () {
    const base = runSummary([scenario("s", [scenarioRun({ [READY]: 9_000 })], [window(READY)])]);
    const broken = runSummary(
      [],
      { schemaVersion: 2 },
      { error: { code: "BOOT_FAILED", message: "kind create cluster failed\nlog", phase: "cluster-boot" } },
    );
    const comparison = compareSummaries(base, broken);
    expect(comparison.rows[0]).to.deep.include({
      scenario: "(run)",
      verdict: "failed",
      note: "the new run's harness broke: [BOOT_FAILED] kind create cluster failed during cluster-boot",
    });
    expect(comparison.failures).to.deep.equal({ failed: 1, missing: 1 });
  });

  it("a scenario that failed in the new run fails the comparison, whatever its times", function () {
    const base = runSummary([scenario("s", [scenarioRun({ [READY]: 9_000 })], [window(READY)])]);
    const cur = runSummary([
      scenario("s", [scenarioRun({ [READY]: 9_000 }, null, "failed")], [window(READY)]),
    ]);
    const comparison = compareSummaries(base, cur);
    expect(row(comparison.rows, null, "outcome")).to.deep.include({
      verdict: "failed",
      note: "failed in the new run: node-loss: 1 milestone(s) outside the expected timeline",
    });
    expect(comparison.failures).to.deep.equal({ failed: 1 });
    expect(compareSummaries(cur, base).verdict).to.equal("pass");
  });
});
