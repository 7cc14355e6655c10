// `rekindle run` as a user types it, on the sim provider at the fast profile, for the integration
// tests that check a whole run end to end: the CLI's exit code, its output and summary.json.
import { execa, type Result } from "execa";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../lib/util/fixtures.js";

export const REKINDLE_BIN = join(PROJECT_ROOT, "bin", "rekindle.js");

/** Runs `rekindle run --provider sim --profile fast --report-dir <reportDir> <args>`; never rejects. */
export function runOnSimFast(
  reportDir: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<Result<{ reject: false; timeout: number }>> {
  return execa(
    process.execPath,
    [REKINDLE_BIN, "run", "--provider", "sim", "--profile", "fast", "--report-dir", reportDir, ...args],
    { reject: false, timeout: timeoutMs },
  );
}
