// reports/<run-id>/summary.json: the contract scripts and CI read. atMs values are ms since the fault.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BudgetResult } from "../expect/budgets.js";
import type { Milestone } from "../observe/milestones.js";
import type { RunEnvironment } from "./environment.js";
import type { ParallelRecord } from "./parallel-join.js";
import type { MergedRecord, ShardRecord } from "./shard.js";
import { summarizeBudgets, type SummaryBudget } from "./summary-budgets.js";

/**
 * summary.json's shape version (docs/summary.schema.json). 1: before it was stated (no
 * schemaVersion, environment or error). 2: adds those three; every field of 1 kept as it was.
 * Optional fields added since (a scenario's and a run's `budgets`, a run's `shard`, `merged` and `parallel`, a run milestone's `zone`) keep it 2: a reader of 2 that
 * does not know them loses nothing it read before.
 */
export const SUMMARY_SCHEMA_VERSION = 2;

/** Where in a run the harness broke. */
export type RunPhase = "cluster-boot" | "suites" | "teardown";

/** The harness or its infrastructure failed (not a scenario's verdict): what, where, and the code. */
export interface RunError {
  /** RekindleError code of the cause (e.g. BOOT_FAILED, UNREACHABLE), "INTERNAL" for anything else. */
  code: string;
  message: string;
  phase: RunPhase;
  hint?: string;
}

export interface SummaryMilestone {
  name: string;
  atMs: number;
}

export interface SummaryExpected {
  name: string;
  minMs: number;
  /** null: must not happen. */
  maxMs: number | null;
}

export interface MilestoneStats {
  n: number;
  p50: number;
  p90: number;
  max: number;
}

export interface ScenarioRun {
  outcome: "passed" | "failed";
  recoveryMs: number | null;
  milestones: Milestone[];
  error?: string;
  /** Milestones that passed only because a known transient delay extended their window, and why. */
  explained?: string[];
  /** The scenario's budgets against this run; absent when it has none (or the fault never came). */
  budgets?: BudgetResult[];
}

export interface ScenarioSummary {
  id: string;
  outcome: "passed" | "failed";
  /** All workloads serving again, ms since the fault (p50 over repeats); null if never. */
  recoveryMs: number | null;
  /** p50 over repeats of each milestone's time. */
  milestones: SummaryMilestone[];
  /** Expected windows, resolved against the first run's anchors. */
  expected: SummaryExpected[];
  /** Per-milestone p50/p90/max over repeats. */
  stats: Record<string, MilestoneStats>;
  runs: ScenarioRun[];
  error?: string;
  /** Each budget over the repeats: passed only if it passed in every run, measured in the worst. */
  budgets?: SummaryBudget[];
}

export interface RunSummary {
  /** SUMMARY_SCHEMA_VERSION when written; absent in summaries of schema 1. */
  schemaVersion?: number;
  runId: string;
  provider: string;
  profile: string;
  startedAt: string;
  finishedAt?: string;
  repeat: number;
  scenarios: ScenarioSummary[];
  /** Scenarios the provider cannot run, each with the reason (not in `scenarios`: they have no outcome). */
  skipped?: { id: string; reason: string }[];
  /** What produced the run (schema 2; absent in schema 1). */
  environment?: RunEnvironment;
  /** null: the harness did its job; else why it could not (schema 2; absent in schema 1). */
  error?: RunError | null;
  /** Set by `rekindle run --shard k/n`: which share of the selection this run ran. */
  shard?: ShardRecord;
  /** Set by `rekindle merge`: the shards this summary joins. */
  merged?: MergedRecord;
  /** Set by `rekindle run --parallel`: the clusters the selection ran on side by side. */
  parallel?: ParallelRecord;
}

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
