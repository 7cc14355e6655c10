// How a bench that boots a sim cluster per size runs: in an interrupt scope (an interrupt tears the
// cluster down within two minutes), each size's result written to bench/results/, a failure
// printed with rekindle's exit code for it (bench-main.ts), the process left to end by itself.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { interruptScope } from "../lib/util/cleanup.js";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { printBenchError } from "./bench-main.js";
import { writeResultsFile } from "./results-file.js";

/** Where a results file named `file` goes. */
function resultsPath(file: string): string {
  return join(PROJECT_ROOT, "bench", "results", file);
}

/**
 * Runs `body` in an interrupt scope named `what` (bench:<name>); settles 0 when it ends, or prints its error and settles with that error's exit code.
 */
export async function runBench(what: string, body: (signal: AbortSignal) => Promise<void>): Promise<void> {
  using scope = interruptScope(what, { budgetMs: 120_000 });
  try {
    await body(scope.signal);
    scope.settle(0);
  } catch (error) {
    process.exitCode = printBenchError(error);
    scope.settle(process.exitCode);
  }
}

/** Writes one size's result to bench/results/`file` and says where. */
export async function writeSizeResult(
  file: string,
  result: unknown,
  progress: (message: string) => void,
): Promise<void> {
  const out = resultsPath(file);
  mkdirSync(dirname(out), { recursive: true });
  await writeResultsFile(out, result);
  progress(`written to ${out}`);
}
