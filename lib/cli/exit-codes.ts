// The process exit codes of every rekindle command, one table: scripts and CI tell "the system
// under test failed" (1) from "the harness could not test it" (3). The help's exit-code lines are
// generated from EXIT_CODE_TABLE, and exitCodeForError maps every thrown error onto it.
import { isApiError, RekindleError, type RekindleErrorCode } from "../errors.js";

export const EXIT_CODES = {
  passed: 0,
  /** A scenario failed (or, outside `run`, the command's own check failed). */
  failed: 1,
  badInput: 2,
  /** The harness or its infrastructure failed: cluster did not boot, engine unavailable, cluster unreachable. */
  infrastructure: 3,
  interrupted: 130,
} as const;

export type ExitCodeName = keyof typeof EXIT_CODES;

/** What each exit code means, in the order the help lists them. */
export const EXIT_CODE_TABLE: readonly { name: ExitCodeName; code: number; meaning: string }[] = [
  {
    name: "passed",
    code: EXIT_CODES.passed,
    meaning: "passed: every scenario passed, the command did its work",
  },
  {
    name: "failed",
    code: EXIT_CODES.failed,
    meaning: "a scenario failed (--fail-on-skip: or was skipped), or the command's own check failed",
  },
  { name: "badInput", code: EXIT_CODES.badInput, meaning: "bad input: an unknown command, option or value" },
  {
    name: "infrastructure",
    code: EXIT_CODES.infrastructure,
    meaning: "the harness or its infrastructure failed: no container engine, cluster unreachable or failing",
  },
  {
    name: "interrupted",
    code: EXIT_CODES.interrupted,
    meaning: "interrupted (Ctrl-C, SIGTERM), after undoing its work",
  },
];

/** The exit-code lines of the help, from EXIT_CODE_TABLE. */
export function exitCodeLines(indent = "  "): string[] {
  return EXIT_CODE_TABLE.map(({ code, meaning }) => `${indent}${String(code).padEnd(5)}${meaning}`);
}

/** Error codes that say the harness or what it runs on broke, not the system under test. */
export const INFRASTRUCTURE_ERROR_CODES: ReadonlySet<RekindleErrorCode> = new Set<RekindleErrorCode>([
  "HARNESS_FAILED",
  "BOOT_FAILED",
  "UNREACHABLE",
  "TOOLCHAIN",
  "BUILD_FAILED",
]);

/**
 * HTTP statuses of an API error that say the cluster could not be used (it failed, refused our
 * credentials or throttled us), not that the command's own request or check was wrong.
 */
export function apiStatusIsInfrastructure(status: number): boolean {
  return status === 0 || status >= 500 || [401, 403, 408, 429].includes(status);
}

/** Node's codes for a connection that could not be made or was lost. */
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

/** The network error code of `error` or of one of its causes (fetch wraps the socket's error), if any. */
export function networkErrorCode(error: unknown, depth = 0): string | undefined {
  if (typeof error !== "object" || error === null || depth > 5) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && NETWORK_ERROR_CODES.has(code)) return code;
  return networkErrorCode((error as { cause?: unknown }).cause, depth + 1);
}

/**
 * The exit code for an error a command threw: a RekindleError by its code; an API error that says
 * the cluster failed or refused us, and a connection that could not be made, are the
 * infrastructure's (3); anything else is a failure (1).
 */
export function exitCodeForError(error: unknown): number {
  if (error instanceof RekindleError) {
    if (error.code === "ABORTED") return EXIT_CODES.interrupted;
    if (error.code === "INVALID_INPUT") return EXIT_CODES.badInput;
    return INFRASTRUCTURE_ERROR_CODES.has(error.code) ? EXIT_CODES.infrastructure : EXIT_CODES.failed;
  }
  if (isApiError(error))
    return apiStatusIsInfrastructure(error.code) ? EXIT_CODES.infrastructure : EXIT_CODES.failed;
  return networkErrorCode(error) !== undefined ? EXIT_CODES.infrastructure : EXIT_CODES.failed;
}
