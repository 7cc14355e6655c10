// A stand-in Kubernetes API server on loopback (plain HTTP) for unit tests: each request is answered
// from a table of "METHOD /path" → handler; anything else is the apiserver's own 404 for a path it
// does not serve (or, with `unrouted: "echo"`, a 200 Status naming the request, and a watch held
// open). Records every request, and writes a kubeconfig pointing at itself. A GET with
// watch=true on a list route is a watch: every object of the list as ADDED, then what changes in
// the handler's answer (looked at every WATCH_POLL_MS) as MODIFIED, ADDED and DELETED events. The
// test may also write events to the open watches itself (`send`).
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_CONTROLLER_CONFIG } from "../../lib/controller/config.js";
import { k8s } from "../../lib/kube/client.js";

export interface FakeResponse {
  status?: number;
  body: unknown;
}

/** A handler returning undefined never answers (a hung API server). */
export type FakeRoutes = Record<string, (req: IncomingMessage) => FakeResponse | undefined>;

export interface FakeRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** Date.now() when it arrived. */
  at: number;
}

export interface FakeApiServerOptions {
  /** What a request no route serves gets: the apiserver's 404 (default), or "echo" (see the top). */
  unrouted?: "404" | "echo";
}

export interface FakeApiServer {
  url: string;
  kubeconfigPath: string;
  kc: k8s.KubeConfig;
  /** "METHOD /path?query" of every request, in order. */
  requests: string[];
  /** Every request as it came, in order. */
  received: FakeRequest[];
  /** Open watches whose path starts with `pathPrefix`. */
  watches(pathPrefix: string): number;
  /** Writes an event line to every open watch whose path starts with `pathPrefix`; returns how many. */
  send(pathPrefix: string, type: string, object: unknown): number;
  close(): Promise<void>;
}

/** A Kubernetes Status body, as the apiserver answers an error. */
export function status(code: number, reason: string, message: string): FakeResponse {
  return {
    status: code,
    body: { kind: "Status", apiVersion: "v1", status: "Failure", reason, message, code },
  };
}

export function list(kind: string, items: unknown[]): FakeResponse {
  return { body: { kind, apiVersion: "v1", metadata: {}, items } };
}

/** How often a watch looks at its list route for changes. */
export const WATCH_POLL_MS = 10;

/**
 * Long enough for a change to reach a controller's watch caches: the stand-in's polls, and the
 * controller's pause between two reads of the node Lease watch (its default leaseReadInterval).
 */
export const WATCH_SETTLE_MS = 20 * WATCH_POLL_MS + DEFAULT_CONTROLLER_CONFIG.leaseReadIntervalMs;

type Listed = { metadata?: { name?: string; namespace?: string } };

function itemsOf(answer: FakeResponse): Map<string, string> {
  const items = (answer.body as { items?: Listed[] } | undefined)?.items ?? [];
  return new Map(
    items.map((i) => [`${i.metadata?.namespace ?? ""}/${i.metadata?.name ?? ""}`, JSON.stringify(i)]),
  );
}

/** Streams the changes of a list route as watch events until the client goes. */
function serveWatch(req: IncomingMessage, res: ServerResponse, handler: FakeRoutes[string]): void {
  const first = handler(req);
  if (!first) return;
  if ((first.status ?? 200) !== 200) {
    res
      .writeHead(first.status ?? 500, { "content-type": "application/json" })
      .end(JSON.stringify(first.body));
    return;
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.flushHeaders();
  let known = new Map<string, string>();
  const send = (type: string, json: string) => res.write(`{"type":"${type}","object":${json}}\n`);
  const look = () => {
    const answer = handler(req);
    if (!answer || (answer.status ?? 200) !== 200) return;
    const now = itemsOf(answer);
    for (const [key, json] of now) {
      const before = known.get(key);
      if (before === undefined) send("ADDED", json);
      else if (before !== json) send("MODIFIED", json);
    }
    for (const [key, json] of known) if (!now.has(key)) send("DELETED", json);
    known = now;
  };
  look();
  const timer = setInterval(look, WATCH_POLL_MS);
  res.on("close", () => {
    clearInterval(timer);
  });
}

/** The 200 Status an unrouted request gets with `unrouted: "echo"`, once its body is in. */
function echo(req: IncomingMessage, res: ServerResponse, path: string): void {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        status: "Success",
        message: `${req.method} ${path}`,
      }),
    );
  });
}

export async function startFakeApiServer(
  routes: FakeRoutes,
  options: FakeApiServerOptions = {},
): Promise<FakeApiServer> {
  const requests: string[] = [];
  const received: FakeRequest[] = [];
  const open = new Map<ServerResponse, string>();
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method ?? ""} ${req.url ?? ""}`);
    received.push({ method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, at: Date.now() });
    const path = (req.url ?? "").split("?")[0] ?? "";
    const handler = routes[`${req.method ?? ""} ${path}`];
    const watch =
      req.method === "GET" &&
      /^(true|1)$/.test(new URL(req.url ?? "", "http://x").searchParams.get("watch") ?? "");
    if (watch) {
      open.set(res, path);
      res.on("close", () => open.delete(res));
    }
    if (!handler && options.unrouted === "echo") {
      if (!watch) echo(req, res, path);
      else res.writeHead(200, { "content-type": "application/json" }).flushHeaders();
      return;
    }
    if (!handler) {
      res.writeHead(404, { "content-type": "text/plain" }).end("404 page not found\n");
      return;
    }
    if (watch) {
      serveWatch(req, res, handler);
      return;
    }
    const answer = handler(req);
    if (!answer) return;
    res
      .writeHead(answer.status ?? 200, { "content-type": "application/json" })
      .end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const kubeconfigPath = join(mkdtempSync(join(tmpdir(), "rekindle-fake-api-")), "kubeconfig");
  writeFileSync(
    kubeconfigPath,
    [
      "apiVersion: v1",
      "kind: Config",
      // client-node speaks plain HTTP only when told to skip TLS verification.
      `clusters: [{ name: fake, cluster: { server: "${url}", insecure-skip-tls-verify: true } }]`,
      "users: [{ name: fake, user: { token: fake-token } }]",
      "contexts: [{ name: fake, context: { cluster: fake, user: fake } }]",
      "current-context: fake",
      "",
    ].join("\n"),
  );
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const matching = (prefix: string) =>
    [...open].filter(([, path]) => path.startsWith(prefix)).map(([res]) => res);
  return {
    url,
    kubeconfigPath,
    kc,
    requests,
    received,
    watches: (prefix) => matching(prefix).length,
    send(prefix, type, object) {
      const targets = matching(prefix);
      for (const res of targets) res.write(`${JSON.stringify({ type, object })}\n`);
      return targets.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
