// `rekindle compare`: the new run against a baseline, scenario by scenario and milestone by
// milestone (p50, and p90 where both sides repeated), plus the recovery time. A regression is a time
// later than the baseline by more than the threshold; a scenario or an expected milestone missing on
// either side, a scenario that failed in the new run, or a must-not-happen milestone that happened in
// it are failures too, each on a line of its own: nothing is skipped in silence.
import { RekindleError } from "../errors.js";
import { statsOf } from "./summary.js";
import type { ScenarioSummary, RunSummary } from "./summary-types.js";

export { readSummary } from "./summary-file.js";

export type Statistic = "p50" | "p90" | "outcome" | "presence";

/**
 * ok: within the threshold (or nothing to hold against it); noted: a difference shown but not failed
 * (an informational milestone seen on one side only, a baseline that had failed). The others fail.
 */
export type RowVerdict = "ok" | "noted" | "regression" | "missing" | "failed" | "unexpected";

export const FAILING_VERDICTS: readonly RowVerdict[] = ["regression", "missing", "failed", "unexpected"];

export interface ComparisonRow {
  scenario: string;
  /** A milestone's name, "recovery" (all workloads serving), or null for the scenario itself. */
  milestone: string | null;
  statistic: Statistic;
  /** ms since the fault; null when that side has none. */
  baseline: number | null;
  new: number | null;
  /** (new - baseline) / baseline; null when either side is missing or the baseline is not after the fault. */
  change: number | null;
  verdict: RowVerdict;
  /** Why, for every row that is not a plain time comparison. */
  note?: string;
}

export interface CompareOptions {
  /** Allowed slowdown as a fraction (0.2 = 20 %). Default 0.2. */
  maxRegression?: number;
  /** Differences smaller than this are never regressions (timer noise). Default 1000 ms. */
  minDeltaMs?: number;
}

export interface Comparison {
  rows: ComparisonRow[];
  verdict: "pass" | "fail";
  /** Rows by failing verdict. */
  failures: Partial<Record<RowVerdict, number>>;
  maxRegression: number;
  minDeltaMs: number;
}

/** Milestones never compared: the fault is time zero, the last renewal is before it and set by the lease clock. */
const NOT_COMPARED = new Set(["fault-injected", "last-lease-renewal"]);

export function parsePercent(text: string): number {
  const match = /^(\d+(?:\.\d+)?)%?$/.exec(text.trim());
  if (!match) throw RekindleError.invalidInput("--max-regression", text, "a percentage such as 20% or 12.5");
  return Number(match[1]) / 100;
}

/** A recorded time, or null (summaries write a milestone with no time as null, NaN in memory). */
function finite(value: number | null | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

interface Thresholds {
  max: number;
  minDelta: number;
}

function timeRow(
  t: Thresholds,
  scenario: string,
  milestone: string,
  statistic: Statistic,
  b: number | null,
  c: number | null,
): ComparisonRow {
  const change = b !== null && c !== null && b > 0 ? (c - b) / b : null;
  const slower = change !== null && b !== null && c !== null && change > t.max && c - b >= t.minDelta;
  return {
    scenario,
    milestone,
    statistic,
    baseline: b,
    new: c,
    change,
    verdict: slower ? "regression" : "ok",
  };
}

function recoveryP90(s: ScenarioSummary): number | null {
  const times = s.runs.map((r) => finite(r.recoveryMs));
  const recovered = times.filter((t) => t !== null);
  // Only when every repeat recovered: a p90 over the ones that did would flatter the run.
  return times.length > 1 && recovered.length === times.length ? statsOf(recovered).p90 : null;
}

function recoveryRows(t: Thresholds, base: ScenarioSummary, cur: ScenarioSummary): ComparisonRow[] {
  const b = finite(base.recoveryMs);
  const c = finite(cur.recoveryMs);
  // Neither side recovers (a scenario whose point is not a recovery): nothing to hold against.
  if (b === null && c === null) return [];
  const row = timeRow(t, cur.id, "recovery", "p50", b, c);
  if (b !== null && c === null)
    return [{ ...row, verdict: "regression", note: "not recovered in the new run" }];
  if (b === null) return [{ ...row, note: "recovered; the baseline did not" }];
  const rows = [row];
  const bp90 = recoveryP90(base);
  const cp90 = recoveryP90(cur);
  if (bp90 !== null && cp90 !== null) rows.push(timeRow(t, cur.id, "recovery", "p90", bp90, cp90));
  return rows;
}

/** How the scenario's windows treat a milestone: must happen (a window), must not (null max), or no window. */
function expectation(s: ScenarioSummary, name: string): "happen" | "never" | "none" {
  const window = s.expected.find((e) => e.name === name);
  if (window === undefined) return "none";
  return window.maxMs === null ? "never" : "happen";
}

function milestoneTime(s: ScenarioSummary, name: string): number | null {
  return finite(s.milestones.find((m) => m.name === name)?.atMs);
}

/** Milestones to look at: those either side recorded, and those either side expects to happen. */
function milestoneNames(base: ScenarioSummary, cur: ScenarioSummary): string[] {
  const names = [
    ...cur.milestones.map((m) => m.name),
    ...base.milestones.map((m) => m.name),
    ...[...cur.expected, ...base.expected].filter((e) => e.maxMs !== null).map((e) => e.name),
  ];
  return [...new Set(names)].filter((n) => !NOT_COMPARED.has(n));
}

function presenceRow(
  scenario: string,
  milestone: string,
  b: number | null,
  c: number | null,
  verdict: RowVerdict,
  note: string,
): ComparisonRow {
  return { scenario, milestone, statistic: "presence", baseline: b, new: c, change: null, verdict, note };
}

function milestoneRows(t: Thresholds, base: ScenarioSummary, cur: ScenarioSummary): ComparisonRow[] {
  const rows: ComparisonRow[] = [];
  for (const name of milestoneNames(base, cur)) {
    const b = milestoneTime(base, name);
    const c = milestoneTime(cur, name);
    const mustHappen = expectation(base, name) === "happen" || expectation(cur, name) === "happen";
    const never = expectation(cur, name) === "never";
    if (c !== null && never) {
      rows.push(presenceRow(cur.id, name, b, c, "unexpected", "happened in the new run; it must not"));
    } else if (b !== null && c !== null) {
      rows.push(timeRow(t, cur.id, name, "p50", b, c));
      const bs = base.stats[name];
      const cs = cur.stats[name];
      if (bs !== undefined && cs !== undefined && bs.n > 1 && cs.n > 1)
        rows.push(timeRow(t, cur.id, name, "p90", finite(bs.p90), finite(cs.p90)));
    } else if (mustHappen) {
      const where =
        b === null && c === null ? "on both sides" : b === null ? "in the baseline" : "in the new run";
      rows.push(presenceRow(cur.id, name, b, c, "missing", `expected to happen; missing ${where}`));
    } else if (b !== null) {
      // Gone as it should be, or an informational milestone (no window) that did not recur.
      const note = never
        ? "gone in the new run (must not happen)"
        : "only in the baseline (no expected window)";
      rows.push(presenceRow(cur.id, name, b, c, never ? "ok" : "noted", note));
    } else if (c !== null) {
      rows.push(presenceRow(cur.id, name, b, c, "noted", "only in the new run (no expected window)"));
    }
  }
  return rows;
}

/** A row that carries no times: a verdict about a whole scenario or run, and why. */
function noteRow(scenario: string, statistic: Statistic, verdict: RowVerdict, note: string): ComparisonRow {
  return { scenario, milestone: null, statistic, baseline: null, new: null, change: null, verdict, note };
}

function outcomeRows(base: ScenarioSummary, cur: ScenarioSummary): ComparisonRow[] {
  const row = (verdict: RowVerdict, note: string) => noteRow(cur.id, "outcome", verdict, note);
  if (cur.outcome === "failed") {
    const why = cur.error?.split("\n")[0];
    return [row("failed", `failed in the new run${why !== undefined ? `: ${why}` : ""}`)];
  }
  return base.outcome === "failed" ? [row("noted", "failed in the baseline, passed in the new run")] : [];
}

function missingScenarioRow(
  id: string,
  side: "baseline" | "new",
  skippedWhy: string | undefined,
): ComparisonRow {
  const where = side === "baseline" ? "not in the baseline" : "not in the new run";
  return noteRow(
    id,
    "presence",
    "missing",
    skippedWhy !== undefined ? `${where} (skipped: ${skippedWhy})` : where,
  );
}

function skipReason(summary: RunSummary, id: string): string | undefined {
  return summary.skipped?.find((s) => s.id === id)?.reason;
}

/** The run-level error of a schema-2 summary (the harness or its infrastructure broke), in one line. */
function runErrorOf(summary: RunSummary): string | undefined {
  const error = summary.error;
  if (error === undefined || error === null) return undefined;
  return `[${error.code}] ${error.message.split("\n")[0] ?? ""} during ${error.phase}`;
}

/** Rows for a run whose harness broke: a failure in the new run, a note in the baseline. */
function runRows(baseline: RunSummary, current: RunSummary): ComparisonRow[] {
  const row = (verdict: RowVerdict, note: string) => noteRow("(run)", "outcome", verdict, note);
  const broke = runErrorOf(current);
  const brokeBefore = runErrorOf(baseline);
  return [
    ...(broke !== undefined ? [row("failed", `the new run's harness broke: ${broke}`)] : []),
    ...(brokeBefore !== undefined ? [row("noted", `the baseline's harness broke: ${brokeBefore}`)] : []),
  ];
}

export function compareSummaries(
  baseline: RunSummary,
  current: RunSummary,
  options: CompareOptions = {},
): Comparison {
  const t: Thresholds = { max: options.maxRegression ?? 0.2, minDelta: options.minDeltaMs ?? 1000 };
  const rows: ComparisonRow[] = runRows(baseline, current);
  const ids = [...new Set([...baseline.scenarios.map((s) => s.id), ...current.scenarios.map((s) => s.id)])];
  for (const id of ids) {
    const base = baseline.scenarios.find((s) => s.id === id);
    const cur = current.scenarios.find((s) => s.id === id);
    if (base === undefined) rows.push(missingScenarioRow(id, "baseline", skipReason(baseline, id)));
    else if (cur === undefined) rows.push(missingScenarioRow(id, "new", skipReason(current, id)));
    else rows.push(...outcomeRows(base, cur), ...recoveryRows(t, base, cur), ...milestoneRows(t, base, cur));
  }
  const failures: Partial<Record<RowVerdict, number>> = {};
  for (const row of rows) {
    if (FAILING_VERDICTS.includes(row.verdict)) failures[row.verdict] = (failures[row.verdict] ?? 0) + 1;
  }
  return {
    rows,
    verdict: Object.keys(failures).length === 0 ? "pass" : "fail",
    failures,
    maxRegression: t.max,
    minDeltaMs: t.minDelta,
  };
}
