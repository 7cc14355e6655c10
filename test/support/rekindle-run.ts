// `rekindle run` as a user types it, on the sim provider at the fast profile, for the integration
// tests that check a whole run end to end: the CLI's exit code, its output and summary.json.
import { execa, type Result } from "execa";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunSummary } from "../../lib/report/summary.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { expectNoExcuse } from "./excuses.js";

export const REKINDLE_BIN = join(PROJECT_ROOT, "bin", "rekindle.js");

/** What a hook or test keeps beyond the work it waits for: reading the reports, killing the child. */
const HOOK_MARGIN_MS = 60_000;

/**
 * Gives the hook or test `context` enough time for work bounded by `workMs`, so mocha never gives
 * up on a hook while the work it started goes on beside later tests: the work's own timeout
 * (which kills it) always fires first. Returns `workMs`.
 */
export function allowFor(context: Mocha.Context, workMs: number): number {
  context.timeout(Math.max(context.timeout(), workMs + HOOK_MARGIN_MS));
  return workMs;
}

/**
 * Runs `rekindle run --provider sim --profile <profile> --report-dir <reportDir> <args>`, killed
 * after `timeoutMs`, and gives `context` (the calling hook or test) that long and a margin. Rejects
 * only when the run's summary lists an excused milestone (the gate allows none: excuses.ts);
 * whatever else the run did is the caller's to judge.
 */
export async function runOnSim(
  context: Mocha.Context,
  profile: "fast" | "default",
  reportDir: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<Result<{ reject: false; timeout: number }>> {
  const result = await execa(
    process.execPath,
    [REKINDLE_BIN, "run", "--provider", "sim", "--profile", profile, "--report-dir", reportDir, ...args],
    { reject: false, timeout: allowFor(context, timeoutMs) },
  );
  expectNoExcuse(reportDir);
  return result;
}

/** `runOnSim` at the fast profile. */
export function runOnSimFast(
  context: Mocha.Context,
  reportDir: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<Result<{ reject: false; timeout: number }>> {
  return runOnSim(context, "fast", reportDir, args, timeoutMs);
}

/** The summary.json a run wrote to `reportDir`. */
export function readRunSummary(reportDir: string): RunSummary {
  return JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
}
