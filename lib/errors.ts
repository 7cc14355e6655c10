// One rich error type for the whole harness: a stable code, a message that names the input,
// an optional hint saying what would be valid, and structured details for reports.
import { STATUS_CODES } from "node:http";
import { didYouMean } from "./util/did-you-mean.js";

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
  /** An API server, kubelet or container engine that does not answer. */
  | "UNREACHABLE"
  /** A scenario definition that contradicts itself (a bug in rekindle or in a new scenario). */
  | "SCENARIO_DEFINITION"
  /** A state the code believes impossible; a bug to report. */
  | "INTERNAL"
  /** A sim cluster boot step that failed with an error of its own (the step is named). */
  | "BOOT_FAILED"
  /**
   * The harness or what it runs on broke outside any scenario's verdict (the cluster did not boot,
   * no container engine, the cluster went away): not a finding about the system under test.
   */
  | "HARNESS_FAILED"
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

  /**
   * `unknown profile "slow"; valid: default, fast`, and `; did you mean fast?` when one of a list
   * of valid values is close to what was given (`fsat`).
   */
  static invalidInput(what: string, got: unknown, valid: readonly string[] | string): RekindleError {
    const validText = typeof valid === "string" ? valid : valid.join(", ");
    const meant = typeof valid === "string" || typeof got !== "string" ? undefined : didYouMean(got, valid);
    const suggestion = meant === undefined ? "" : `; did you mean ${meant}?`;
    return new RekindleError(
      "INVALID_INPUT",
      `unknown ${what} ${JSON.stringify(got)}; valid: ${validText}${suggestion}`,
      {
        hint: `valid ${what} values: ${validText}`,
        details: { what, got, valid, ...(meant !== undefined ? { suggestion: meant } : {}) },
      },
    );
  }

  /** Text for a terminal: message, hint and the most useful details. */
  describe(): string {
    const lines = [`error [${this.code}]: ${this.message}`];
    if (this.hint !== undefined && !this.message.includes(this.hint)) lines.push(`  hint: ${this.hint}`);
    const command = this.details["command"];
    if (typeof command === "string") lines.push(`  command: ${command}`);
    const log = this.details["log"];
    if (typeof log === "string") lines.push(`  log: ${log}`);
    if (this.cause !== undefined) {
      const cause = errorMessage(this.cause);
      if (!this.message.includes(cause)) lines.push(`  cause: ${cause}`);
    }
    const tail = this.details["outputTail"];
    if (typeof tail === "string" && tail.length > 0) {
      lines.push("  last output:", ...tail.split("\n").map((l) => `    ${l}`));
    }
    return lines.join("\n");
  }
}

/** The shape of @kubernetes/client-node's ApiException (matched by shape: this file sits below lib/kube). */
export interface ApiErrorLike extends Error {
  code: number;
  body: unknown;
  headers: unknown;
}

/** An error from a Kubernetes API call: an HTTP status, the response body and all its headers. */
export function isApiError(error: unknown): error is ApiErrorLike {
  return (
    error instanceof Error &&
    "code" in error &&
    typeof error.code === "number" &&
    "body" in error &&
    "headers" in error
  );
}

/** The longest response text quoted when the body is not a Status. */
const API_BODY_QUOTE_CHARS = 200;

function statusOf(body: unknown): { message?: unknown; reason?: unknown } | undefined {
  if (typeof body === "object" && body !== null) return body;
  if (typeof body !== "string") return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === "object" && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One line for an API error: "HTTP 404 NotFound: nodefences.rekindle.dev \"x\" not found" from
 * the Status body's reason and message, else the status and the start of whatever body came back
 * ("HTTP 404: 404 page not found", what an apiserver answers for a resource it does not serve).
 * Never the headers, which client-node's own message repeats in full.
 */
export function apiErrorMessage(error: ApiErrorLike): string {
  const status = statusOf(error.body);
  if (typeof status?.message === "string" && status.message) {
    const reason = typeof status.reason === "string" && status.reason ? ` ${status.reason}` : "";
    return `HTTP ${error.code}${reason}: ${status.message}`;
  }
  const text = typeof error.body === "string" ? error.body.trim().split("\n")[0]?.trim() : undefined;
  if (text) return `HTTP ${error.code}: ${text.slice(0, API_BODY_QUOTE_CHARS)}`;
  const name = STATUS_CODES[error.code];
  return `HTTP ${error.code}${name ? ` ${name}` : ""}`;
}

/** A readable message for anything thrown (Errors, strings, API errors summarised in one line). */
export function errorMessage(error: unknown): string {
  if (isApiError(error)) return apiErrorMessage(error);
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
