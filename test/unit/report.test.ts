import { expect } from "chai";
import type { WindowCheck } from "../../lib/expect/assert.js";
import { timelineSvg, type ChartInput } from "../../lib/report/chart.js";
import { junitXml } from "../../lib/report/junit.js";
import { percentile, statsOf, summarizeScenario, type RunSummary } from "../../lib/report/summary.js";
import { NEVER_CHECK, READY_UNKNOWN_CHECK } from "../support/chart-inputs.js";

const run = (recoveryMs: number | null, ready: number) => ({
  outcome: "passed" as const,
  recoveryMs,
  milestones: [
    { name: "fault-injected", atMs: 0 },
    { name: "deployment:recovered", atMs: ready },
  ],
});

/** A chart of a fault and node-ready-unknown `unknownAtMs` after it, judged by `checks`. */
function readyUnknownChart(
  unknownAtMs: number,
  checks: readonly WindowCheck[],
  more: Pick<ChartInput, "windows"> = {},
): string {
  return timelineSvg({
    title: "t",
    subtitle: "s",
    milestones: [
      { name: "fault-injected", atMs: 0 },
      { name: "node-ready-unknown", atMs: unknownAtMs },
    ],
    checks,
    ...more,
  });
}

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
    const svg = readyUnknownChart(30_000, [{ ...READY_UNKNOWN_CHECK, actualMs: 30_000, verdict: "late" }]);
    expect(svg).to.include(">fault-injected</text>").and.include(">node-ready-unknown</text>");
    expect(svg).to.include('fill="#c62828"');
  });

  describe("a milestone that never came", () => {
    const svg = readyUnknownChart(
      9_000,
      [
        READY_UNKNOWN_CHECK,
        {
          name: "pods-evicted",
          after: "fault-injected",
          minMs: 50_000,
          maxMs: 61_000,
          verdict: "missing",
          why: "toleration",
        },
        { name: "pod-replaced", after: "pods-evicted", verdict: "anchor-missing", why: "start" },
        NEVER_CHECK,
      ],
      { windows: [{ name: "pod-replaced", minMs: 51_000, maxMs: 70_000 }] },
    );
    const row = (name: string): string => {
      const lines = svg.split("\n");
      const start = lines.findIndex((l) => l.includes(`>${name}</text>`));
      const end = lines.findIndex(
        (l, i) => i > start && l.includes('text-anchor="end">') && !l.includes("missing ("),
      );
      return lines.slice(start, end === -1 ? undefined : end).join("\n");
    };

    it("keeps its row: the expected window and a red ✗ with a missing label at the window's right edge", () => {
      const evicted = row("pods-evicted");
      expect(evicted).to.include('<g class="missing" stroke="#c62828"');
      expect(evicted).to.include('fill="#c62828" font-weight="bold"');
      expect(evicted).to.include("missing (due 50.0s–61.0s)");
      const band = /<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"/.exec(evicted);
      const cross = /<line x1="([\d.]+)"/.exec(evicted);
      expect(band, evicted).to.not.equal(null);
      expect(cross, evicted).to.not.equal(null);
      const rightEdge = Number(band?.[1]) + Number(band?.[2]);
      expect(Number(cross?.[1]) + 5).to.be.closeTo(rightEdge, 0.2);
    });

    it("whose anchor never came either is drawn in its nominal window, saying so", () => {
      const replaced = row("pod-replaced");
      expect(replaced).to.include('class="missing"');
      expect(replaced).to.include("missing (due 51.0s–70.0s nominal; pods-evicted never came either)");
    });

    it("draws a recorded milestone as before: a green dot and its time, no missing marker", () => {
      const ready = row("node-ready-unknown");
      expect(ready).to.include('fill="#2e7d32"').and.include(">9.0s</text>");
      expect(ready).to.not.include("missing");
    });

    it("does not call a must-not-happen milestone missing when it did not happen", () => {
      expect(row("volume-detached-early")).to.include('fill="url(#never)"').and.not.include("missing");
    });
  });
});
