// The files every `rekindle run` leaves, whatever happened: summary.json, junit.xml, one SVG
// timeline per scenario, signoff.html and signoff.md (also appended to $GITHUB_STEP_SUMMARY). A
// run whose harness broke gets the same files, with the failure as the run's `error`.
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorMessage, RekindleError } from "../errors.js";
import { writeJunit } from "../report/junit.js";
import { writeSignoff } from "../report/signoff.js";
import { writeSummary, type RunError, type RunPhase, type RunSummary } from "../report/summary.js";
import type { Progress } from "../util/progress.js";

const PHASE_WORDS: Record<RunPhase, string> = {
  "cluster-boot": "bringing the cluster up",
  suites: "running the suites",
  teardown: "tearing the cluster down",
};

/** The error the body threw when disposal threw too (`await using` wraps both in a SuppressedError). */
function primary(error: unknown): unknown {
  if (error instanceof Error && error.name === "SuppressedError" && "suppressed" in error)
    return error.suppressed;
  return error;
}

/** summary.json's `error` for what broke the run. */
export function runErrorOf(error: unknown, phase: RunPhase): RunError {
  const cause = primary(error);
  const known = cause instanceof RekindleError ? cause : undefined;
  return {
    code: known?.code ?? "INTERNAL",
    message: errorMessage(cause),
    phase,
    ...(known?.hint !== undefined ? { hint: known.hint } : {}),
  };
}

/**
 * The error a run that broke ends with: the user's own input found wrong only on opening the
 * cluster stays INVALID_INPUT (exit 2); anything else is HARNESS_FAILED (exit 3).
 */
export function harnessFailure(error: unknown, phase: RunPhase, reportDir: string): RekindleError {
  const cause = primary(error);
  if (cause instanceof RekindleError && (cause.code === "INVALID_INPUT" || cause.code === "ABORTED"))
    return cause;
  return new RekindleError(
    "HARNESS_FAILED",
    `the harness failed while ${PHASE_WORDS[phase]}: ${errorMessage(cause)}`,
    {
      hint:
        cause instanceof RekindleError && cause.hint !== undefined
          ? cause.hint
          : `the reports in ${reportDir} say what ran before it broke`,
      details: { phase, reportDir },
      cause,
    },
  );
}

/** summary.json's `error`: what stopped the run (a break, else an interrupt), in the phase it hit; null if nothing did. */
export function summaryError(
  stopped: unknown,
  broke: unknown,
  abortedIn: RunPhase | undefined,
  phase: RunPhase,
): RunSummary["error"] {
  if (stopped === undefined) return null;
  return runErrorOf(stopped, broke === undefined ? (abortedIn ?? phase) : phase);
}

/** Failed scenarios; a run where none ran counts one, unless it was a shard with nothing to run. */
export function failedScenarios(summary: RunSummary, nothingToRun: boolean): number {
  const failed = summary.scenarios.filter((s) => s.outcome === "failed").length;
  return failed + (summary.scenarios.length === 0 && !nothingToRun ? 1 : 0);
}

/** Chart file name of a scenario: its id with "/" as "__". */
export function chartFileName(id: string): string {
  return `${id.replaceAll("/", "__")}.svg`;
}

/** Writes every report of a run (or of shards merged: `rekindle merge`), each scenario's chart from `recorded`. */
export function writeRunReports(
  reportDir: string,
  summary: RunSummary,
  recorded: readonly { id: string; chart: string }[],
  progress: Progress,
): void {
  for (const scenario of recorded)
    writeFileSync(join(reportDir, "charts", chartFileName(scenario.id)), scenario.chart);
  writeSummary(reportDir, summary);
  writeJunit(reportDir, summary);
  const charts = new Map(recorded.map((s) => [s.id, s.chart]));
  const signoff = writeSignoff(reportDir, summary, charts);
  if (signoff.stepSummary !== undefined) progress.info(`sign-off appended to ${signoff.stepSummary}`);
  if (signoff.stepSummaryError !== undefined)
    progress.info(`could not append the sign-off to $GITHUB_STEP_SUMMARY: ${signoff.stepSummaryError}`);
}

/** The allure-results/ of several report directories in `out`'s (their files have unique names), so one Allure report shows them all. */
export function copyAllureResults(reportDirs: readonly string[], out: string): void {
  for (const dir of reportDirs) {
    const results = join(dir, "allure-results");
    if (!existsSync(results)) continue;
    mkdirSync(join(out, "allure-results"), { recursive: true });
    for (const name of readdirSync(results))
      cpSync(join(results, name), join(out, "allure-results", name), { recursive: true });
  }
}
