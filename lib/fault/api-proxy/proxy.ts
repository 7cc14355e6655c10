// startApiProxy: an HTTP(S) proxy between a controller and kube-apiserver that forwards every
// request as the kubeconfig's user, under fault rules set and cleared at run time (rules.ts):
// watches frozen, filtered to bookmarks or closed, requests delayed, writes dropped.
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { isIP } from "node:net";
import { RekindleError } from "../../errors.js";
import { k8s } from "../../kube/client.js";
import { loadKubeconfig } from "../../kube/kubeconfig-load.js";
import { startControlServer, type ControlServer } from "./control-server.js";
import { Flow, statusBody, type ProxyCounters } from "./flow.js";
import { proxyKubeconfig, writeProxyKubeconfig } from "./proxy-kubeconfig.js";
import { checkRules } from "./rule-check.js";
import { ruleText } from "./rule-syntax.js";
import type { FaultRule } from "./rules.js";
import { proxyServingTls } from "./tls.js";
import type { ApiProxy, ProxyStatus } from "./types.js";
import { connectUpstream } from "./upstream.js";

export type { ApiProxy, ProxyStatus } from "./types.js";

export interface ApiProxyOptions {
  /** The apiserver to forward to: a kubeconfig file, or one already loaded. */
  kubeconfig: string | k8s.KubeConfig;
  /** A context of the kubeconfig. Default: its current context. */
  context?: string;
  /** Where the proxy listens. Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Serve TLS with a certificate made at start (for `host`). Default: only when `host` is not loopback. */
  tls?: boolean;
  /** The control API's port on 127.0.0.1; false: none (the rules are set in process). Default 0: a free port. */
  controlPort?: number | false;
  /** Also write a kubeconfig that points at the proxy to this file. Default: none. */
  outKubeconfig?: string;
  /** The rules it starts with. Default: none. */
  rules?: readonly (FaultRule | string)[];
  /** Aborting it closes the proxy. */
  signal?: AbortSignal;
  /** One line per upstream failure. Default: none. */
  log?: (line: string) => void;
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        new RekindleError("INVALID_INPUT", `the proxy cannot listen on ${host}:${port}: ${error.message}`, {
          hint: "pick another --listen address or port (port 0: a free one)",
          cause: error,
        }),
      );
    });
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : port);
    });
  });
}

function loaded(options: ApiProxyOptions): { kc: k8s.KubeConfig; source: string } {
  if (typeof options.kubeconfig === "string")
    return loadKubeconfig({
      path: options.kubeconfig,
      ...(options.context !== undefined ? { context: options.context } : {}),
    });
  return { kc: options.kubeconfig, source: "the given kubeconfig" };
}

/** Starts the proxy; it runs until closed (or `signal` aborts). */
export async function startApiProxy(options: ApiProxyOptions): Promise<ApiProxy> {
  const host = options.host ?? "127.0.0.1";
  if (host !== "localhost" && isIP(host) === 0)
    throw RekindleError.invalidInput("proxy listen host", host, "an IPv4 or IPv6 address, or localhost");
  let rules: readonly FaultRule[] = checkRules(options.rules ?? []);
  const { kc, source } = loaded(options);
  const upstream = await connectUpstream(kc, source);
  const useTls = options.tls ?? !isLoopback(host);
  const tls = useTls ? await proxyServingTls(host, options.signal) : undefined;
  const flows = new Set<Flow>();
  const counters: ProxyCounters = {
    requests: 0,
    droppedWrites: 0,
    closed: 0,
    delayed: 0,
    filteredEvents: 0,
    upstreamErrors: 0,
  };
  let nextId = 1;
  const log = options.log ?? (() => undefined);
  const context = {
    upstream,
    rules: () => rules,
    counters,
    log,
    done: (flow: Flow) => flows.delete(flow),
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const flow = new Flow(nextId++, req, res, context);
    flows.add(flow);
    flow.start();
  };
  const server = tls ? createHttpsServer({ key: tls.key, cert: tls.cert }, handle) : createHttpServer(handle);
  // An upgrade (exec, attach, port-forward) is not proxied: the client hears why.
  server.on("upgrade", (_req: IncomingMessage, socket: NodeJS.WritableStream & { destroy(): void }) => {
    const body = statusBody(
      501,
      "NotImplemented",
      "rekindle api proxy: upgrades (exec, attach, port-forward) are not proxied",
    );
    socket.end(
      `HTTP/1.1 501 Not Implemented\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  const port = await listen(server, options.port ?? 0, host);
  const url = `${tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const caPem = tls?.ca;
  if (options.outKubeconfig !== undefined) writeProxyKubeconfig(options.outKubeconfig, url, caPem);
  let control: ControlServer | undefined;
  let closing: Promise<void> | undefined;

  const status = (): ProxyStatus => ({
    url,
    upstream: upstream.url,
    ...(control !== undefined ? { controlUrl: control.url } : {}),
    ...(options.outKubeconfig !== undefined ? { kubeconfig: options.outKubeconfig } : {}),
    rules: rules.map(ruleText),
    streams: [...flows].map((f) => f.status()),
    counters: { ...counters },
  });
  const setRules = (next: readonly (FaultRule | string)[]): ProxyStatus => {
    rules = checkRules(next);
    for (const flow of [...flows]) flow.rulesChanged();
    return status();
  };
  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const flow of [...flows]) flow.abort();
      await Promise.all([
        new Promise<void>((resolve) => {
          server.close(() => {
            resolve();
          });
          server.closeAllConnections();
        }),
        control?.close(),
      ]);
      upstream.close();
    })();
    return closing;
  };
  const proxy: ApiProxy = {
    url,
    get controlUrl() {
      return control?.url;
    },
    caPem,
    kubeConfig: () => proxyKubeconfig(url, caPem),
    setRules,
    clearRules: () => setRules([]),
    rules: () => rules,
    status,
    close,
    [Symbol.asyncDispose]: close,
  };
  try {
    if (options.controlPort !== false) control = await startControlServer(proxy, options.controlPort ?? 0);
  } catch (error) {
    await close();
    throw error;
  }
  options.signal?.addEventListener("abort", () => void close(), { once: true });
  return proxy;
}
