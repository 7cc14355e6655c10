// One rich error type for the whole harness: a stable code, a message that names the input,
// an optional hint saying what would be valid, and structured details for reports.

export type RekindleErrorCode =
  | "INVALID_INPUT"
  | "TOOLCHAIN"
  | "BUILD_FAILED"
  | "COMMAND_FAILED"
  | "PROCESS_EXITED"
  | "TIMEOUT"
  | "NOT_FOUND"
  | "UNSUPPORTED"
  | "ABORTED"
  /** Something already exists or is in a state that rules the action out (a running cluster, a foreign namespace). */
  | "CONFLICT"
  /** The cluster lacks what a step needs (no worker, nodes not Ready, a kubelet setting missing, a safety cap). */
  | "PRECONDITION"
  /** An API server or kubelet that does not answer. */
  | "UNREACHABLE"
  /** A scenario definition that contradicts itself (a bug in rekindle or in a new scenario). */
  | "SCENARIO_DEFINITION"
  /** A state the code believes impossible; a bug to report. */
  | "INTERNAL"
  /** A sim cluster boot step that failed with an error of its own (the step is named). */
  | "BOOT_FAILED"
  | "TIMELINE_MISMATCH";

export interface RekindleErrorOptions {
  /** What the user can do about it, e.g. the list of valid values. */
  hint?: string;
  /** Structured facts (command line, exit code, log path…) kept for reports. */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** Marks a RekindleError across module instances (a test loader may load this file twice). */
const REKINDLE_ERROR = Symbol.for("rekindle.RekindleError");

export class RekindleError extends Error {
  override readonly name = "RekindleError";
  readonly [REKINDLE_ERROR] = true;

  /**
   * `error instanceof RekindleError` holds for a RekindleError from another instance of this module
   * too (tsx serves a file to require() and to import() as two modules, and the CLI imports its
   * subcommands lazily). Subclasses keep the ordinary prototype check.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== RekindleError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === "object" && value !== null && REKINDLE_ERROR in value;
  }
  readonly code: RekindleErrorCode;
  readonly hint: string | undefined;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: RekindleErrorCode, message: string, options: RekindleErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.hint = options.hint;
    this.details = options.details ?? {};
  }

  /** `unknown profile "slow"; valid: default, fast` */
  static invalidInput(what: string, got: unknown, valid: readonly string[] | string): RekindleError {
    const validText = typeof valid === "string" ? valid : valid.join(", ");
    return new RekindleError("INVALID_INPUT", `unknown ${what} ${JSON.stringify(got)}; valid: ${validText}`, {
      hint: `valid ${what} values: ${validText}`,
      details: { what, got, valid },
    });
  }

  /** Text for a terminal: message, hint and the most useful details. */
  describe(): string {
    const lines = [`error [${this.code}]: ${this.message}`];
    if (this.hint !== undefined && !this.message.includes(this.hint)) lines.push(`  hint: ${this.hint}`);
    const command = this.details["command"];
    if (typeof command === "string") lines.push(`  command: ${command}`);
    const log = this.details["log"];
    if (typeof log === "string") lines.push(`  log: ${log}`);
    const tail = this.details["outputTail"];
    if (typeof tail === "string" && tail.length > 0) {
      lines.push("  last output:", ...tail.split("\n").map((l) => `    ${l}`));
    }
    return lines.join("\n");
  }
}

/** A readable message for anything thrown (Errors, strings, API error bodies). */
export function errorMessage(error: unknown): string {
  // @kubernetes/client-node's ApiException: its message repeats headers; the Status body says it all.
  if (error instanceof Error && "code" in error && "body" in error && typeof error.body === "string") {
    try {
      const status = JSON.parse(error.body) as { message?: string; reason?: string };
      if (status.message)
        return `HTTP ${String(error.code)} ${status.reason ?? ""}: ${status.message}`.replace(" :", ":");
    } catch {
      // Not a Status body: fall through.
    }
  }
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error);
  } catch {
    return "unknown error";
  }
}

export function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(errorMessage(error));
}
