// The process exit codes of every rekindle command, one table: scripts and CI tell "the system
// under test failed" (1) from "the harness could not test it" (3).
import { RekindleError, type RekindleErrorCode } from "../errors.js";

export const EXIT_CODES = {
  passed: 0,
  /** A scenario failed (or, outside `run`, the command's own check failed). */
  failed: 1,
  badInput: 2,
  /** The harness or its infrastructure failed: cluster did not boot, engine unavailable, cluster unreachable. */
  infrastructure: 3,
  interrupted: 130,
} as const;

/** Error codes that say the harness or what it runs on broke, not the system under test. */
export const INFRASTRUCTURE_ERROR_CODES: ReadonlySet<RekindleErrorCode> = new Set<RekindleErrorCode>([
  "HARNESS_FAILED",
  "BOOT_FAILED",
  "UNREACHABLE",
  "TOOLCHAIN",
  "BUILD_FAILED",
]);

/** The exit code for an error a command threw (anything not a RekindleError is a failure, 1). */
export function exitCodeForError(error: unknown): number {
  if (!(error instanceof RekindleError)) return EXIT_CODES.failed;
  if (error.code === "ABORTED") return EXIT_CODES.interrupted;
  if (error.code === "INVALID_INPUT") return EXIT_CODES.badInput;
  return INFRASTRUCTURE_ERROR_CODES.has(error.code) ? EXIT_CODES.infrastructure : EXIT_CODES.failed;
}
