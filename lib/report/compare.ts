// `rekindle compare`: the new run against a baseline, milestone by milestone; a regression is a
// milestone (or the recovery time) later than the baseline by more than the threshold.
import { readFileSync } from "node:fs";
import { RekindleError } from "../errors.js";
import type { RunSummary } from "./summary.js";

export interface ComparisonRow {
  scenario: string;
  milestone: string;
  baselineMs: number | null;
  currentMs: number | null;
  /** (current - baseline) / baseline; null when either side is missing. */
  change: number | null;
  regression: boolean;
}

export interface CompareOptions {
  /** Allowed slowdown as a fraction (0.2 = 20 %). Default 0.2. */
  maxRegression?: number;
  /** Differences smaller than this are never regressions (timer noise). Default 1000 ms. */
  minDeltaMs?: number;
}

export function parsePercent(text: string): number {
  const match = /^(\d+(?:\.\d+)?)%?$/.exec(text.trim());
  if (!match) throw RekindleError.invalidInput("--max-regression", text, "a percentage such as 20% or 12.5");
  return Number(match[1]) / 100;
}

export function readSummary(path: string): RunSummary {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new RekindleError(
      "INVALID_INPUT",
      `cannot read summary ${path}: ${error instanceof Error ? error.message : String(error)}`,
      {
        hint: "pass the summary.json of a rekindle run (reports/<run-id>/summary.json)",
      },
    );
  }
  const summary = parsed as Partial<RunSummary>;
  if (!Array.isArray(summary.scenarios) || typeof summary.runId !== "string") {
    throw new RekindleError("INVALID_INPUT", `${path} is not a rekindle summary.json (no runId/scenarios)`);
  }
  return summary as RunSummary;
}

/** One milestone of one scenario: its change, and whether that is a regression. */
function comparisonRow(
  scenario: string,
  milestone: string,
  b: number | null,
  c: number | null,
  max: number,
  minDelta: number,
): ComparisonRow {
  const change = b !== null && c !== null && b > 0 ? (c - b) / b : null;
  // Recovery lost entirely is the worst regression.
  const lostRecovery = milestone === "recovery" && b !== null && c === null;
  const regression =
    lostRecovery || (change !== null && b !== null && c !== null && change > max && c - b >= minDelta);
  return { scenario, milestone, baselineMs: b, currentMs: c, change, regression };
}

export function compareSummaries(
  baseline: RunSummary,
  current: RunSummary,
  options: CompareOptions = {},
): ComparisonRow[] {
  const max = options.maxRegression ?? 0.2;
  const minDelta = options.minDeltaMs ?? 1000;
  const rows: ComparisonRow[] = [];
  for (const scenario of current.scenarios) {
    const base = baseline.scenarios.find((s) => s.id === scenario.id);
    if (!base) continue;
    const pairs: [string, number | null, number | null][] = [
      ["recovery", base.recoveryMs, scenario.recoveryMs],
    ];
    for (const m of scenario.milestones) {
      if (m.name === "fault-injected" || m.name === "last-lease-renewal") continue;
      pairs.push([m.name, base.milestones.find((b) => b.name === m.name)?.atMs ?? null, m.atMs]);
    }
    for (const [milestone, b, c] of pairs)
      rows.push(comparisonRow(scenario.id, milestone, b, c, max, minDelta));
  }
  return rows;
}

export function formatComparison(rows: readonly ComparisonRow[]): string {
  const s = (ms: number | null) => (ms === null ? "—" : `${(ms / 1000).toFixed(1)}s`);
  const table = rows.map((r) => [
    r.scenario,
    r.milestone,
    s(r.baselineMs),
    s(r.currentMs),
    r.change === null ? "—" : `${r.change >= 0 ? "+" : ""}${(r.change * 100).toFixed(1)}%`,
    r.regression ? "REGRESSION" : "",
  ]);
  const header = ["scenario", "milestone", "baseline", "current", "change", ""];
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), ...table.map(line)].join("\n");
}
