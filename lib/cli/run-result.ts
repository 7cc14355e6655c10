// The end of `rekindle run`: a line per scenario saying what it measured and the closing counts
// (text), or the run's summary as JSON on stdout (`-o json`); then the exit code.
import { scenarioFigure } from "../report/scenario-figure.js";
import { missedSummaryBudgetLines } from "../report/summary-budgets.js";
import type { RunResult } from "../run/runner.js";
import type { OutputFormat } from "./args.js";
import { EXIT_CODES, exitCodeForError } from "./exit-codes.js";

/** What `-o json` prints: where the reports are, and summary.json's content. */
export function runResultJson(result: RunResult): string {
  return `${JSON.stringify({ reportDir: result.reportDir, summary: result.summary }, null, 2)}\n`;
}

/**
 * The end-of-run text: one line per scenario with what it measured (and under it each budget it
 * missed, each late milestone a known delay explained), skips, reports, counts.
 */
export function runResultText(result: RunResult): string {
  const { summary } = result;
  const lines = [``, `rekindle run ${summary.runId} (${summary.provider}, profile ${summary.profile})`];
  for (const s of summary.scenarios) {
    lines.push(`  ${s.outcome === "passed" ? "PASS" : "FAIL"}  ${s.id}  (${scenarioFigure(s)})`);
    for (const missed of missedSummaryBudgetLines(s)) lines.push(`        ${missed}`);
    for (const note of s.runs.flatMap((r) => r.explained ?? []))
      lines.push(`        late, explained: ${note}`);
  }
  for (const skip of summary.skipped ?? []) lines.push(`  SKIP  ${skip.id}  (${skip.reason})`);
  if (summary.error) lines.push(`  HARNESS FAILED during ${summary.error.phase}: ${summary.error.code}`);
  lines.push(`reports: ${result.reportDir}`);
  const passed = summary.scenarios.filter((s) => s.outcome === "passed").length;
  lines.push(`scenarios: ${passed} passed, ${summary.scenarios.length - passed} failed`);
  return `${lines.join("\n")}\n`;
}

/** Prints the result in `format` (a broken harness's error to stderr) and returns the exit code. */
export function finishRun(result: RunResult, format: OutputFormat): number {
  process.stdout.write(format === "json" ? runResultJson(result) : runResultText(result));
  if (result.harnessError !== undefined) {
    process.stderr.write(`${result.harnessError.describe()}\n`);
    return exitCodeForError(result.harnessError);
  }
  return result.failed > 0 ? EXIT_CODES.failed : EXIT_CODES.passed;
}
