// `rekindle trend`'s model: the runs in startedAt order, and per scenario one series per milestone
// (its p50 time since the fault in each run that recorded it).
import type { RunSummary } from "./summary-types.js";
import type { LoadedSummary } from "./summary-file.js";

export interface TrendRun {
  runId: string;
  startedAt: string;
  /** rekindle's git sha from the summary's environment block, when it has one. */
  gitSha?: string;
  path: string;
}

export interface TrendPoint {
  /** Index into Trend.runs. */
  run: number;
  atMs: number;
}

export interface TrendSeries {
  milestone: string;
  points: TrendPoint[];
}

export interface ScenarioTrend {
  scenario: string;
  series: TrendSeries[];
  /** Each run's outcome for this scenario, by run index; absent when the run did not have it. */
  outcomes: (("passed" | "failed") | undefined)[];
}

export interface Trend {
  provider: string;
  profile: string;
  runs: TrendRun[];
  scenarios: ScenarioTrend[];
}

/** Not drawn: the fault is time zero in every run, the last renewal precedes it. */
const NOT_DRAWN = new Set(["fault-injected", "last-lease-renewal"]);

function stringAt(value: unknown, ...keys: string[]): string | undefined {
  let current = value;
  for (const key of keys) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return typeof current === "string" && current.length > 0 ? current : undefined;
}

/** rekindle's git sha as schema 2's `environment.rekindle` records it ("-dirty" appended for a dirty tree), if it does. */
export function gitShaOf(summary: RunSummary): string | undefined {
  const environment: unknown = (summary as RunSummary & { environment?: unknown }).environment;
  const sha = stringAt(environment, "rekindle", "gitSha");
  if (sha === undefined) return undefined;
  const rekindle = (environment as { rekindle: { gitDirty?: unknown } }).rekindle;
  return rekindle.gitDirty === true ? `${sha}-dirty` : sha;
}

function byStart(a: LoadedSummary, b: LoadedSummary): number {
  const at = (s: LoadedSummary) => Date.parse(s.summary.startedAt);
  const diff = at(a) - at(b);
  return Number.isNaN(diff) ? a.summary.startedAt.localeCompare(b.summary.startedAt) : diff;
}

export function buildTrend(summaries: readonly LoadedSummary[]): Trend {
  const ordered = [...summaries].sort(byStart);
  const runs = ordered.map(({ path, summary }): TrendRun => {
    const gitSha = gitShaOf(summary);
    return { runId: summary.runId, startedAt: summary.startedAt, path, ...(gitSha ? { gitSha } : {}) };
  });
  const scenarioIds = [...new Set(ordered.flatMap((s) => s.summary.scenarios.map((x) => x.id)))];
  const scenarios = scenarioIds.map((id): ScenarioTrend => {
    const entries = ordered.map((s) => s.summary.scenarios.find((x) => x.id === id));
    const series = new Map<string, TrendPoint[]>();
    entries.forEach((entry, run) => {
      for (const m of entry?.milestones ?? []) {
        if (NOT_DRAWN.has(m.name) || typeof m.atMs !== "number" || !Number.isFinite(m.atMs)) continue;
        const points = series.get(m.name) ?? [];
        points.push({ run, atMs: m.atMs });
        series.set(m.name, points);
      }
    });
    return {
      scenario: id,
      series: [...series].map(([milestone, points]) => ({ milestone, points })),
      outcomes: entries.map((e) => e?.outcome),
    };
  });
  // Differing values (compared with --allow-mismatch) are all named.
  const all = (field: "provider" | "profile") =>
    [...new Set(ordered.map((s) => s.summary[field]))].join(" + ");
  return { provider: all("provider"), profile: all("profile"), runs, scenarios };
}
