// Counts the API requests and response bytes of this process (the in-process controller's): node's
// http.request and https.request are wrapped, which client-node's fetch and the watch caches both
// go through. Used by bench/controller-requests.ts and bench/controller.ts.
import http from "node:http";
import https from "node:https";

/** What a request does to the API: a WATCH, a LIST of a collection, a GET of one object, a write. */
export type RequestKind = "WATCH" | "LIST" | "GET" | "WRITE";

/**
 * The kind of an API request from its method and path (query included). A GET is a LIST when its
 * path names a collection: /api/v1/R, /api/v1/namespaces/N/R, /apis/G/V/R, /apis/G/V/namespaces/N/R
 * (and /api/v1/namespaces itself); one more segment names an object, more a subresource.
 */
export function requestKind(method: string, path: string): RequestKind {
  const [pathname = "", query = ""] = path.split("?");
  if (new URLSearchParams(query).get("watch") === "true") return "WATCH";
  if (method.toUpperCase() !== "GET") return "WRITE";
  const segments = pathname.split("/").filter((s) => s !== "");
  const prefix = segments[0] === "api" ? 2 : segments[0] === "apis" ? 3 : undefined;
  if (prefix === undefined) return "GET";
  let rest = segments.slice(prefix);
  if (rest[0] === "namespaces" && rest.length >= 3) rest = rest.slice(2);
  return rest.length === 1 ? "LIST" : "GET";
}

export interface RequestCounts {
  /** Requests by "<kind> <method> <path without query>". */
  byRequest: Record<string, number>;
  byKind: Record<RequestKind, number>;
  /** Response bytes received (watch streams included) while counting. */
  bytes: number;
}

export interface RequestCounter {
  /** Clears the counts and counts from now on. */
  start(): void;
  /** Stops counting; returns what was counted since start(). */
  stop(): RequestCounts;
}

let installed: RequestCounter | undefined;

/** Wraps http.request and https.request once per process; counting is off until start(). */
export function installRequestCounter(): RequestCounter {
  if (installed) return installed;
  const requests = new Map<string, number>();
  let bytes = 0;
  let counting = false;
  const wrap = (module: typeof http | typeof https): void => {
    const original = module.request.bind(module) as (...args: unknown[]) => http.ClientRequest;
    (module as { request: unknown }).request = (...args: unknown[]): http.ClientRequest => {
      const request = original(...args);
      if (counting) {
        const key = `${requestKind(request.method, request.path)} ${request.method} ${request.path.split("?")[0] ?? ""}`;
        requests.set(key, (requests.get(key) ?? 0) + 1);
      }
      request.on("response", (response: http.IncomingMessage) => {
        response.on("data", (chunk: Buffer) => {
          if (counting) bytes += chunk.length;
        });
      });
      return request;
    };
  };
  wrap(http);
  wrap(https);
  installed = {
    start() {
      requests.clear();
      bytes = 0;
      counting = true;
    },
    stop() {
      counting = false;
      const byKind: Record<RequestKind, number> = { WATCH: 0, LIST: 0, GET: 0, WRITE: 0 };
      for (const [key, n] of requests) byKind[key.split(" ")[0] as RequestKind] += n;
      return { byRequest: Object.fromEntries([...requests].sort()), byKind, bytes };
    },
  };
  return installed;
}
