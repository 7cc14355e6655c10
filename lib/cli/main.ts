// The `rekindle` command: runs the command the table (command-table.ts) names and turns errors
// into clear messages and exit codes (exit-codes.ts: 0 success, 1 failure, 2 bad input, 3 the harness or its
// infrastructure failed, 130 interrupted).
import { errorMessage, isApiError, RekindleError } from "../errors.js";
import { interruptScope } from "../util/cleanup.js";
import { isParseArgsError } from "./args.js";
import { exitCodeForError } from "./exit-codes.js";
import { COMMANDS, rekindleUsage } from "./command-table.js";
import { resolveCommand, runCommandTable, usageText } from "./dispatch.js";

/** How long Ctrl-C waits for the command to undo its work (a scenario's undo restarts nodes, lifts taints). */
const INTERRUPT_CLEANUP_BUDGET_MS = 300_000;

export async function main(argv: string[]): Promise<number> {
  const [command] = argv;
  // Ctrl-C/SIGTERM aborts this signal; the command undoes what it started, and its own exit code
  // is the process's (130 for an interrupted run, 0 for a controller told to stop).
  using interrupt = interruptScope(`rekindle ${command ?? ""}`.trim(), {
    budgetMs: INTERRUPT_CLEANUP_BUDGET_MS,
  });
  const code = await dispatch(argv, interrupt.signal);
  interrupt.settle(code);
  return code;
}

async function dispatch(argv: string[], signal: AbortSignal): Promise<number> {
  try {
    return await runCommandTable(COMMANDS, rekindleUsage, argv, signal);
  } catch (error) {
    if (isParseArgsError(error)) return reportParseError(error, argv);
    return reportError(error);
  }
}

/** An option the command does not take (or a value it lacks): named, with the valid forms (its usage). */
async function reportParseError(error: Error, argv: readonly string[]): Promise<number> {
  const { path, spec } = resolveCommand(COMMANDS, argv);
  const usage = spec ? await usageText(spec, path) : await rekindleUsage();
  process.stderr.write(
    `error [INVALID_INPUT]: ${error.message}\n${usage}\n  see: ${["rekindle", ...path, "--help"].join(" ")}\n`,
  );
  return 2;
}

/** Writes `error` to stderr and returns the exit code it means. */
function reportError(error: unknown): number {
  if (error instanceof RekindleError) {
    process.stderr.write(`${error.describe()}\n`);
    return exitCodeForError(error);
  }
  if (isApiError(error)) {
    // The API's own words in one line (its Status), not client-node's dump of every header.
    process.stderr.write(`error [API]: ${errorMessage(error)}\n`);
    return 1;
  }
  process.stderr.write(
    `rekindle: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return 1;
}
