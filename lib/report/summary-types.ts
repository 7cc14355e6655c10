// summary.json's shape (the contract scripts and CI read; docs/summary.schema.json): the run, each
// scenario over its repeats and each run of it, their milestones, windows, statistics and budgets,
// and the records of a parallel run. A leaf of lib/report/: the writer (summary.ts) and the pieces
// it is made of (summary-budgets.ts, parallel-join.ts) import it rather than each other.
import type { BudgetResult } from "../expect/budgets.js";
import type { Milestone } from "../observe/milestones.js";
import type { RunEnvironment } from "./environment.js";
import type { RunError } from "./run-error.js";
import type { MergedRecord, ShardRecord } from "./shard.js";

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

/** A budget of a scenario over its repeats (ScenarioSummary.budgets). */
export interface SummaryBudget extends BudgetResult {
  /** Runs that missed it; a run that could not check it (its fault never came) counts as one. */
  missedRuns: number;
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

/** summary.json's `parallel`. */
export interface ParallelRecord {
  clusters: number;
  /** "--parallel 2", or auto's rule with the machine's numbers. */
  chosenBy: string;
  slots: ParallelSlot[];
  /** Selected scenarios no cluster took (interrupted, or every cluster broke). */
  notRun: string[];
}

export interface ParallelSlot {
  index: number;
  runId: string;
  /** The cluster's own reports and component logs. */
  reportDir: string;
  startedAt: string;
  finishedAt?: string;
  /** What it took from the queue, in the order it ran them. */
  scenarios: string[];
  error: RunError | null;
}
