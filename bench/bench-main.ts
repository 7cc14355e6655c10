// The ending every one-shot bench script shares: run `main`, exit 0, or print the error as the CLI
// does (a RekindleError with its hint) and exit with its code. Exiting outright, not letting the
// loop drain: a watch's socket or an agent's keep-alive must not hold the process open.
import { exitCodeForError } from "../lib/cli/exit-codes.js";
import { errorMessage, RekindleError } from "../lib/errors.js";

export async function runBenchMain(main: () => Promise<void>): Promise<never> {
  try {
    await main();
    process.exit(0);
  } catch (error) {
    process.exit(printBenchError(error));
  }
}

/** Prints `error` as the CLI does (a RekindleError with its hint); returns the exit code for it. */
export function printBenchError(error: unknown): number {
  process.stderr.write(`${error instanceof RekindleError ? error.describe() : errorMessage(error)}\n`);
  return exitCodeForError(error);
}
