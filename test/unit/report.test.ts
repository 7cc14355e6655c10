import { expect } from "chai";
import { compareSummaries, formatComparison, parsePercent } from "../../lib/report/compare.js";
import { timelineSvg } from "../../lib/report/chart.js";
import { junitXml } from "../../lib/report/junit.js";
import { percentile, statsOf, summarizeScenario, type RunSummary } from "../../lib/report/summary.js";
import { RekindleError } from "../../lib/errors.js";

const run = (recoveryMs: number | null, ready: number) => ({
  outcome: "passed" as const,
  recoveryMs,
  milestones: [
    { name: "fault-injected", atMs: 0 },
    { name: "deployment:recovered", atMs: ready },
  ],
});

describe("reports", function () {
  it("nearest-rank percentiles", function () {
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50)).to.equal(5);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).to.equal(9);
    expect(statsOf([30, 10, 20])).to.deep.equal({ n: 3, p50: 20, p90: 30, max: 30 });
  });

  it("folds repeats into p50 milestones with p90/max stats", function () {
    const s = summarizeScenario("x", [run(10_000, 10_000), run(30_000, 30_000), run(20_000, 20_000)], []);
    expect(s.recoveryMs).to.equal(20_000);
    expect(s.milestones.find((m) => m.name === "deployment:recovered")?.atMs).to.equal(20_000);
    expect(s.stats["deployment:recovered"]).to.deep.equal({ n: 3, p50: 20_000, p90: 30_000, max: 30_000 });
    expect(s.outcome).to.equal("passed");
  });

  it("a scenario that once failed to recover has no recovery time", function () {
    expect(summarizeScenario("x", [run(10_000, 10_000), run(null, 12_000)], []).recoveryMs).to.equal(null);
  });

  const summary = (recovery: number | null, ready: number): RunSummary => ({
    runId: "r",
    provider: "sim",
    profile: "fast",
    startedAt: "2026-01-01T00:00:00Z",
    repeat: 1,
    scenarios: [summarizeScenario("node-loss/x", [run(recovery, ready)], [])],
  });

  it("compare flags a slowdown beyond the threshold, and a lost recovery", function () {
    const rows = compareSummaries(summary(20_000, 20_000), summary(26_000, 21_000), { maxRegression: 0.2 });
    expect(rows.find((r) => r.milestone === "recovery")).to.deep.include({ regression: true });
    expect(rows.find((r) => r.milestone === "deployment:recovered")).to.deep.include({ regression: false });
    expect(compareSummaries(summary(20_000, 20_000), summary(null, 20_000))[0]?.regression).to.equal(true);
    expect(formatComparison(rows)).to.match(/recovery\s+20\.0s\s+26\.0s\s+\+30\.0%\s+REGRESSION/);
  });

  it("compare ignores differences below timer noise", function () {
    const rows = compareSummaries(summary(1_000, 1_000), summary(1_500, 1_500), { maxRegression: 0.2 });
    expect(rows.every((r) => !r.regression)).to.equal(true);
  });

  it("parses --max-regression and rejects nonsense", function () {
    expect(parsePercent("20%")).to.equal(0.2);
    expect(parsePercent("12.5")).to.equal(0.125);
    expect(() => parsePercent("lots")).to.throw(RekindleError, /--max-regression/);
  });

  it("junit.xml has a testcase per scenario and escapes failures", function () {
    const s = summary(1_000, 1_000);
    s.scenarios.push({
      ...summarizeScenario(
        "node-loss/<y>",
        [{ ...run(null, 1), outcome: "failed", error: "late & wrong" }],
        [],
      ),
    });
    const xml = junitXml(s);
    expect(xml)
      .to.include('name="node-loss/x"')
      .and.include('name="node-loss/&lt;y&gt;"')
      .and.include("late &amp; wrong")
      .and.include('failures="1"');
  });

  it("the SVG chart has a row per milestone and marks a late one red", function () {
    const svg = timelineSvg({
      title: "t",
      subtitle: "s",
      milestones: [
        { name: "fault-injected", atMs: 0 },
        { name: "node-ready-unknown", atMs: 30_000 },
      ],
      checks: [
        {
          name: "node-ready-unknown",
          after: "fault-injected",
          minMs: 8_000,
          maxMs: 11_000,
          actualMs: 30_000,
          verdict: "late",
          why: "grace",
        },
      ],
    });
    expect(svg).to.include(">fault-injected</text>").and.include(">node-ready-unknown</text>");
    expect(svg).to.include('fill="#c62828"');
  });
});
