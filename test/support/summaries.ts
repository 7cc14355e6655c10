// Generated summary.json contents for the compare and trend tests, and a CLI runner that captures output.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  summarizeScenario,
  type RunSummary,
  type ScenarioRun,
  type ScenarioSummary,
  type SummaryExpected,
} from "../../lib/report/summary.js";

/** One run of a scenario: milestone name → ms since the fault (the fault itself is added). */
export function scenarioRun(
  milestones: Record<string, number>,
  recoveryMs: number | null = null,
  outcome: "passed" | "failed" = "passed",
): ScenarioRun {
  return {
    outcome,
    recoveryMs,
    milestones: [
      { name: "fault-injected", atMs: 0 },
      ...Object.entries(milestones).map(([name, atMs]) => ({ name, atMs })),
    ],
    ...(outcome === "failed"
      ? { error: "node-loss: 1 milestone(s) outside the expected timeline\ntable" }
      : {}),
  };
}

/** A window that must happen (maxMs set) or must not (maxMs null). */
export function window(name: string, maxMs: number | null = 60_000): SummaryExpected {
  return { name, minMs: 0, maxMs };
}

export function scenario(
  id: string,
  runs: readonly ScenarioRun[],
  expected: readonly SummaryExpected[] = [],
): ScenarioSummary {
  return summarizeScenario(id, runs, expected);
}

/**
 * A summary of these scenarios. `fields` override the identity (provider, profile, runId…);
 * `extra` adds fields as a summary file would hold them (schema 2's `environment` or `error`).
 */
export function runSummary(
  scenarios: readonly ScenarioSummary[],
  fields: Partial<RunSummary> & { schemaVersion?: number } = {},
  extra: Record<string, unknown> = {},
): RunSummary {
  const summary: RunSummary = {
    runId: "20260101-000000-aaaaaa",
    provider: "kind",
    profile: "fast",
    startedAt: "2026-01-01T00:00:00.000Z",
    repeat: 1,
    scenarios: [...scenarios],
    ...fields,
  };
  return Object.assign(summary, extra);
}

/** Writes each summary (or raw text) to its own report directory under a new temp dir; returns the summary.json paths. */
export function writeSummaries(contents: readonly (RunSummary | string)[]): string[] {
  const root = mkdtempSync(join(tmpdir(), "rekindle-summaries-"));
  return contents.map((content, i) => {
    const dir = join(root, `run-${i}`);
    mkdirSync(dir);
    const path = join(dir, "summary.json");
    writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
    return path;
  });
}
