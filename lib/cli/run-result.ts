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
  lines.push(closingLine(summary));
  return `${lines.join("\n")}\n`;
}

/**
 * The run's last line, read by CI: `scenarios: N passed, N failed`, then `, N skipped` when a
 * scenario was skipped.
 */
export function closingLine(summary: RunResult["summary"]): string {
  const passed = summary.scenarios.filter((s) => s.outcome === "passed").length;
  const skipped = summary.skipped?.length ?? 0;
  return `scenarios: ${passed} passed, ${summary.scenarios.length - passed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`;
}

export interface FinishRunOptions {
  /** --fail-on-skip: a run that skipped a scenario exits 1. Default false (skips do not fail). */
  failOnSkip?: boolean;
}

/** Prints the result in `format` (a broken harness's error to stderr) and returns the exit code. */
export function finishRun(result: RunResult, format: OutputFormat, options: FinishRunOptions = {}): number {
  process.stdout.write(format === "json" ? runResultJson(result) : runResultText(result));
  if (result.harnessError !== undefined) {
    process.stderr.write(`${result.harnessError.describe()}\n`);
    return exitCodeForError(result.harnessError);
  }
  if (result.failed > 0) return EXIT_CODES.failed;
  const skipped = result.summary.skipped?.length ?? 0;
  if (options.failOnSkip === true && skipped > 0) {
    process.stderr.write(`--fail-on-skip: ${skipped} scenario${skipped === 1 ? " was" : "s were"} skipped\n`);
    return EXIT_CODES.failed;
  }
  return EXIT_CODES.passed;
}
