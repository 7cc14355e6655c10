// How `rekindle compare` prints a comparison: a table with a closing verdict line, or JSON (-o json).
import { FAILING_VERDICTS, type Comparison } from "./compare.js";
import { schemaVersionOf, type LoadedSummary } from "./summary-file.js";

function seconds(ms: number | null): string {
  return ms === null ? "—" : `${(ms / 1000).toFixed(1)}s`;
}

function percent(change: number | null): string {
  return change === null ? "—" : `${change >= 0 ? "+" : ""}${(change * 100).toFixed(1)}%`;
}

export function formatComparison(comparison: Comparison): string {
  const table = comparison.rows.map((r) => [
    r.scenario,
    r.milestone ?? "—",
    r.statistic,
    seconds(r.baseline),
    seconds(r.new),
    percent(r.change),
    `${FAILING_VERDICTS.includes(r.verdict) ? r.verdict.toUpperCase() : r.verdict}${r.note !== undefined ? ` (${r.note})` : ""}`,
  ]);
  const header = ["scenario", "milestone", "stat", "baseline", "new", "change", "verdict"];
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), ...table.map(line), "", verdictLine(comparison)].join("\n");
}

/** "no regression beyond 20.0%" or "FAIL: 2 regression, 1 missing (threshold 20.0%)". */
export function verdictLine(comparison: Comparison): string {
  const threshold = `${(comparison.maxRegression * 100).toFixed(1)}%`;
  if (comparison.verdict === "pass") return `PASS: no regression beyond ${threshold}, nothing missing`;
  const counts = Object.entries(comparison.failures).map(([verdict, n]) => `${n} ${verdict}`);
  return `FAIL: ${counts.join(", ")} (threshold ${threshold}, noise floor ${comparison.minDeltaMs} ms)`;
}

function side(loaded: LoadedSummary) {
  const { summary } = loaded;
  return {
    path: loaded.path,
    runId: summary.runId,
    provider: summary.provider,
    profile: summary.profile,
    schemaVersion: schemaVersionOf(summary),
    startedAt: summary.startedAt,
  };
}

/** The comparison as one JSON document (stable field names: scripts read it). */
export function comparisonJson(
  comparison: Comparison,
  baseline: LoadedSummary,
  current: LoadedSummary,
  warnings: readonly string[],
): string {
  const document = {
    verdict: comparison.verdict,
    failures: comparison.failures,
    maxRegression: comparison.maxRegression,
    minDeltaMs: comparison.minDeltaMs,
    baseline: side(baseline),
    new: side(current),
    warnings,
    rows: comparison.rows.map((r) => ({
      scenario: r.scenario,
      milestone: r.milestone,
      statistic: r.statistic,
      baseline: r.baseline,
      new: r.new,
      change: r.change,
      verdict: r.verdict,
      ...(r.note !== undefined ? { note: r.note } : {}),
    })),
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
