// The `rekindle` command: runs the command the table (command-table.ts) names and turns errors
// into clear messages and exit codes (exit-codes.ts, the one table the help prints too).
import { errorMessage, isApiError, RekindleError } from "../errors.js";
import { interruptScope } from "../util/cleanup.js";
import { isParseArgsError, optionError, USAGE_ERROR } from "../util/parse-options.js";
import { setProgressLevel } from "../util/progress.js";
import { exitCodeForError, networkErrorCode } from "./exit-codes.js";
import { COMMANDS, rekindleUsage } from "./command-table.js";
import { resolveCommand, runCommandTable } from "./dispatch.js";
import { globalFlags } from "./global-flags.js";

/** How long Ctrl-C waits for the command to undo its work (a scenario's undo restarts nodes, lifts taints). */
const INTERRUPT_CLEANUP_BUDGET_MS = 300_000;

export async function main(argv: string[]): Promise<number> {
  const { level, rest } = globalFlags(argv);
  const [command] = rest;
  // Ctrl-C/SIGTERM aborts this signal; the command undoes what it started, and its own exit code
  // is the process's (130 for an interrupted run, 0 for a controller told to stop).
  using interrupt = interruptScope(`rekindle ${command ?? ""}`.trim(), {
    budgetMs: INTERRUPT_CLEANUP_BUDGET_MS,
  });
  const restore = level === undefined ? () => undefined : setProgressLevel(level);
  try {
    const code = await dispatch(rest, interrupt.signal);
    interrupt.settle(code);
    return code;
  } finally {
    restore();
  }
}

async function dispatch(argv: string[], signal: AbortSignal): Promise<number> {
  try {
    return await runCommandTable(COMMANDS, rekindleUsage, argv, signal);
  } catch (error) {
    // A parseArgs refusal not already worded by parseOptions (its known options are not at hand here).
    const refusal = isParseArgsError(error) ? optionError(error, []) : error;
    if (refusal instanceof RekindleError && refusal.details[USAGE_ERROR] === true)
      return reportUsageError(refusal, argv);
    return reportError(refusal);
  }
}

/**
 * An unknown option, command word or a missing value: one line naming it (with the closest valid
 * one), and where the valid forms are; never the whole usage.
 */
function reportUsageError(error: RekindleError, argv: readonly string[]): number {
  const { path } = resolveCommand(COMMANDS, argv);
  // `rekindle help <unknown>`: the list of commands is rekindle's own help.
  const see = path[0] === "help" ? [] : path;
  process.stderr.write(
    `error [${error.code}]: ${error.message}\n  see: ${["rekindle", ...see, "--help"].join(" ")}\n`,
  );
  return exitCodeForError(error);
}

/** Writes `error` to stderr and returns the exit code it means (exit-codes.ts). */
function reportError(error: unknown): number {
  if (error instanceof RekindleError) {
    process.stderr.write(`${error.describe()}\n`);
  } else if (isApiError(error)) {
    // The API's own words in one line (its Status), not client-node's dump of every header.
    process.stderr.write(`error [API]: ${errorMessage(error)}\n`);
  } else if (networkErrorCode(error) !== undefined) {
    process.stderr.write(`error [UNREACHABLE]: ${errorMessage(error)} (${networkErrorCode(error)})\n`);
  } else {
    process.stderr.write(
      `rekindle: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  return exitCodeForError(error);
}
