// The raw runs behind a calibration, kept small enough to commit: of each summary.json, what the
// calibration reads (identity, build, kubernetes version, each scenario's expectations and each
// run's milestone times and excuses). bench/calibration.ts accepts these files as it accepts full
// summaries, so the committed table can be rebuilt and its ranges checked.
import type { RunSummary } from "../lib/report/summary.js";
import type { CalibrationSummary } from "./calibration-pool.js";

export interface TrimmedSummary extends CalibrationSummary {
  schemaVersion?: number;
  startedAt: string;
  repeat: number;
  environment?: {
    rekindle?: { version: string; gitSha: string | null; gitDirty: boolean | null };
    kubernetes?: unknown;
  };
  scenarios: {
    id: string;
    outcome: "passed" | "failed";
    /** Empty: the per-run times are in `runs` (kept so the file still reads as a summary). */
    milestones: never[];
    expected: RunSummary["scenarios"][number]["expected"];
    runs: {
      outcome: "passed" | "failed";
      recoveryMs: number | null;
      milestones: { name: string; atMs: number }[];
      explained?: string[];
    }[];
  }[];
}

export function trimSummary(summary: RunSummary): TrimmedSummary {
  const env = summary.environment;
  return {
    ...(summary.schemaVersion !== undefined ? { schemaVersion: summary.schemaVersion } : {}),
    runId: summary.runId,
    provider: summary.provider,
    profile: summary.profile,
    startedAt: summary.startedAt,
    repeat: summary.repeat,
    ...(env ? { environment: { rekindle: env.rekindle, kubernetes: env.kubernetes } } : {}),
    scenarios: summary.scenarios.map((s) => ({
      id: s.id,
      outcome: s.outcome,
      milestones: [],
      expected: s.expected,
      runs: s.runs.map((r) => ({
        outcome: r.outcome,
        recoveryMs: r.recoveryMs,
        milestones: r.milestones.map((m) => ({ name: m.name, atMs: m.atMs })),
        ...(r.explained && r.explained.length > 0 ? { explained: r.explained } : {}),
      })),
    })),
  };
}

/** The file name a trimmed summary is kept under: provider and run id, unique per run. */
export function trimmedFileName(summary: { provider: string; runId: string }): string {
  return `${summary.provider}-${summary.runId}.json`;
}
