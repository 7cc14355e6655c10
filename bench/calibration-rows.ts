// The calibration table: per scenario and milestone, the sim's and kind's times over every pooled
// run (median, min and max), flagged where the medians differ by more than max(1 s, 10 % of
// kind's). Pure: bench/calibration.ts reads the files and writes the page.
import type { ScenarioRun } from "../lib/report/summary.js";
import type { PooledRuns, PooledScenario } from "./calibration-pool.js";

/** Milestones worth comparing: what the kubelet, the control plane and the controller did. */
const COMPARED =
  /^(node-|taint-added:|taint-removed:|evicted:|.*:(pod-terminated|pod-gone|replacement-created|replacement-running|recovered)$|fence:|event:NothingToRelease$|multi-attach|va-|forced-detach:)/;

export interface Spread {
  /** Runs in which the milestone happened. */
  n: number;
  /** The median: the middle value, or the mean of the two middle values when n is even. */
  p50: number;
  min: number;
  max: number;
}

export interface CalibrationRow {
  scenario: string;
  milestone: string;
  sim: Spread;
  kind: Spread;
  flagged: boolean;
}

export interface ScenarioFlags {
  scenario: string;
  runs: { sim: number; kind: number };
  rows: number;
  flagged: number;
}

export function spreadOf(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const middle = (i: number) => sorted[i] ?? Number.NaN;
  const p50 = n % 2 === 1 ? middle((n - 1) / 2) : (middle(n / 2 - 1) + middle(n / 2)) / 2;
  return { n, p50, min: middle(0), max: middle(n - 1) };
}

/** The milestone's time in each run where it happened: its first occurrence, ms since the fault. */
export function milestoneTimes(runs: readonly ScenarioRun[], name: string): number[] {
  return runs.flatMap((r) => {
    const first = r.milestones.find((m) => m.name === name);
    return first ? [first.atMs] : [];
  });
}

/** Whether the sim's median is off kind's by more than max(1 s, 10 % of kind's). */
export function isFlagged(simMs: number, kindMs: number): boolean {
  return Math.abs(simMs - kindMs) > Math.max(1_000, 0.1 * Math.abs(kindMs));
}

function comparedNames(s: PooledScenario): string[] {
  return [...new Set(s.runs.flatMap((r) => r.milestones.map((m) => m.name)))].filter((n) => COMPARED.test(n));
}

/** Rows for every scenario both providers ran, ordered by scenario, then by kind's median. */
export function calibrationRows(sim: PooledRuns, kind: PooledRuns): CalibrationRow[] {
  const rows: CalibrationRow[] = [];
  for (const k of kind.scenarios) {
    const s = sim.scenarios.find((x) => x.id === k.id);
    if (!s) continue;
    for (const name of comparedNames(k)) {
      const simTimes = milestoneTimes(s.runs, name);
      const kindTimes = milestoneTimes(k.runs, name);
      if (simTimes.length === 0 || kindTimes.length === 0) continue;
      const simSpread = spreadOf(simTimes);
      const kindSpread = spreadOf(kindTimes);
      rows.push({
        scenario: k.id,
        milestone: name,
        sim: simSpread,
        kind: kindSpread,
        flagged: isFlagged(simSpread.p50, kindSpread.p50),
      });
    }
  }
  return rows.sort((a, b) => a.scenario.localeCompare(b.scenario) || a.kind.p50 - b.kind.p50);
}

/** Per scenario: its run counts, its rows and how many of them are flagged. */
export function flagsByScenario(
  rows: readonly CalibrationRow[],
  sim: PooledRuns,
  kind: PooledRuns,
): ScenarioFlags[] {
  const runsOf = (p: PooledRuns, id: string) => p.scenarios.find((s) => s.id === id)?.runs.length ?? 0;
  const ids = [...new Set(rows.map((r) => r.scenario))];
  return ids.map((scenario) => {
    const mine = rows.filter((r) => r.scenario === scenario);
    return {
      scenario,
      runs: { sim: runsOf(sim, scenario), kind: runsOf(kind, scenario) },
      rows: mine.length,
      flagged: mine.filter((r) => r.flagged).length,
    };
  });
}

/** Runs that passed only because an allowance excused a late milestone (`explained`), of all runs. */
export function excuses(pooled: PooledRuns): { runs: number; excused: number } {
  const runs = pooled.scenarios.flatMap((s) => s.runs);
  return { runs: runs.length, excused: runs.filter((r) => (r.explained?.length ?? 0) > 0).length };
}

/** Scenarios in the table with fewer runs than `minRuns` on either provider. */
export function shortOfRuns(flags: readonly ScenarioFlags[], minRuns: number): ScenarioFlags[] {
  return flags.filter((f) => f.runs.sim < minRuns || f.runs.kind < minRuns);
}
