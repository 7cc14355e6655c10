// reports/<run-id>/summary.json: the contract scripts and CI read. atMs values are ms since the fault.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { summarizeBudgets } from "./summary-budgets.js";
import type {
  MilestoneStats,
  RunSummary,
  ScenarioRun,
  ScenarioSummary,
  SummaryExpected,
} from "./summary-types.js";

// summary.json's shape lives in summary-types.ts and run-error.ts (leaves the pieces of the report
// import); its readers name it from here, beside the writer.
export type { RunError, RunPhase } from "./run-error.js";
export type {
  MilestoneStats,
  RunSummary,
  ScenarioRun,
  ScenarioSummary,
  SummaryBudget,
  SummaryExpected,
  SummaryMilestone,
} from "./summary-types.js";

/**
 * summary.json's shape version (docs/summary.schema.json). 1: before it was stated (no
 * schemaVersion, environment or error). 2: adds those three; every field of 1 kept as it was.
 * Optional fields added since (a scenario's and a run's `budgets`, a run's `shard`, `merged` and `parallel`, a run milestone's `zone`) keep it 2: a reader of 2 that
 * does not know them loses nothing it read before.
 */
export const SUMMARY_SCHEMA_VERSION = 2;

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  // Nearest-rank: the smallest value with at least p% of values at or below it.
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? Number.NaN;
}

export function statsOf(values: readonly number[]): MilestoneStats {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** Folds repeated runs of one scenario into its summary entry. */
export function summarizeScenario(
  id: string,
  runs: readonly ScenarioRun[],
  expected: readonly SummaryExpected[],
): ScenarioSummary {
  const names = [...new Set(runs.flatMap((r) => r.milestones.map((m) => m.name)))];
  const stats: Record<string, MilestoneStats> = {};
  for (const name of names) {
    stats[name] = statsOf(
      runs.flatMap((r) => r.milestones.filter((m) => m.name === name).map((m) => m.atMs)),
    );
  }
  const recoveries = runs.map((r) => r.recoveryMs);
  const recovered = recoveries.filter((r): r is number => r !== null);
  const failed = runs.find((r) => r.outcome === "failed");
  const budgets = summarizeBudgets(runs);
  return {
    id,
    outcome: failed ? "failed" : "passed",
    recoveryMs: recovered.length === runs.length && recovered.length > 0 ? statsOf(recovered).p50 : null,
    milestones: names
      .map((name) => ({ name, atMs: stats[name]?.p50 ?? Number.NaN }))
      .sort((a, b) => a.atMs - b.atMs),
    expected: [...expected],
    stats,
    runs: [...runs],
    ...(failed?.error !== undefined ? { error: failed.error } : {}),
    ...(budgets.length > 0 ? { budgets } : {}),
  };
}

export function writeSummary(dir: string, summary: RunSummary): string {
  const path = join(dir, "summary.json");
  writeFileSync(path, `${JSON.stringify(summary, null, 2)}\n`);
  return path;
}
