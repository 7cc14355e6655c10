// Headers across the proxy: hop-by-hop ones stay on their own connection (RFC 9110 §7.6.1), the
// client's credentials never reach the apiserver (the proxy speaks as its kubeconfig's user), and
// a watch is asked for as plain JSON lines so that its events can be told apart.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** Also dropped from a request: the proxy sets the host and the credentials of its own. */
const REQUEST_ONLY = new Set(["host", "authorization"]);

function copy(
  headers: IncomingHttpHeaders,
  drop: (name: string) => boolean,
): Record<string, string | string[]> {
  const named = new Set(
    (typeof headers.connection === "string" ? headers.connection : "")
      .split(",")
      .map((h) => h.trim().toLowerCase()),
  );
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name) || drop(name)) continue;
    out[name] = value;
  }
  return out;
}

/**
 * What goes upstream of a client's request headers. A watch asks for JSON only when the client
 * accepts JSON (client-go offers protobuf first), and uncompressed, so its events can be read.
 */
export function upstreamRequestHeaders(
  headers: IncomingHttpHeaders,
  watch: boolean,
): Record<string, string | string[]> {
  const out = copy(headers, (name) => REQUEST_ONLY.has(name) || (watch && name === "accept-encoding"));
  if (watch && (headers.accept ?? "").includes("application/json")) out["accept"] = "application/json";
  return out;
}

/** What goes back to the client of the apiserver's response headers. */
export function downstreamResponseHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return copy(headers, () => false);
}
