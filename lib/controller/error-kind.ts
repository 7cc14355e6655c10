// Which kind of failure an error is, as a short metric label: the error counters are labelled by
// it, so it must come from a small fixed set (never a message, a node or a URL).
import { RekindleError } from "../errors.js";
import { apiStatus } from "../kube/client.js";

export type ErrorKind =
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "gone"
  | "invalid"
  | "throttled"
  | "client_error"
  | "server_error"
  | "timeout"
  | "aborted"
  | "network"
  | "other";

const BY_STATUS: Readonly<Record<number, ErrorKind>> = {
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  410: "gone",
  422: "invalid",
  429: "throttled",
};

/** Socket-level failures: no HTTP answer at all. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "ETIMEDOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function errnoCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; typeof e === "object" && e !== null && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The kind of `error`: an HTTP status class for API answers, else timeout, aborted, network or other. */
export function errorKind(error: unknown): ErrorKind {
  const status = apiStatus(error);
  if (status !== undefined) {
    return BY_STATUS[status] ?? (status >= 500 ? "server_error" : status >= 400 ? "client_error" : "other");
  }
  if (error instanceof RekindleError) {
    if (error.code === "TIMEOUT") return "timeout";
    if (error.code === "ABORTED") return "aborted";
    if (error.code === "UNREACHABLE") return "network";
  }
  if (error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")) {
    return error.name === "AbortError" ? "aborted" : "timeout";
  }
  const code = errnoCode(error);
  if (code !== undefined && NETWORK_CODES.has(code)) return "network";
  return "other";
}
