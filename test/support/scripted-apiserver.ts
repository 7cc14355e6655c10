// A stand-in apiserver on loopback (plain HTTP) whose watches the test writes to: every request is
// recorded (method, URL, headers, when it arrived); a watch stays open until the test ends it or
// writes events to it (`send`); any other request is answered 200 with a JSON object echoing it.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface ScriptedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** Date.now() when it arrived. */
  at: number;
}

export interface ScriptedApiServer {
  url: string;
  kubeconfigPath: string;
  requests: ScriptedRequest[];
  /** Open watches whose path starts with `pathPrefix`. */
  watches(pathPrefix: string): number;
  /** Writes an event line to every open watch whose path starts with `pathPrefix`; returns how many. */
  send(pathPrefix: string, type: string, object: unknown): number;
  close(): Promise<void>;
}

export function leaseObject(name: string, resourceVersion: string): Record<string, unknown> {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name, namespace: "kube-node-lease", resourceVersion },
  };
}

export async function startScriptedApiServer(): Promise<ScriptedApiServer> {
  const requests: ScriptedRequest[] = [];
  const open = new Map<ServerResponse, string>();
  const server = createServer((req, res) => {
    const url = req.url ?? "/";
    requests.push({ method: req.method ?? "GET", url, headers: req.headers, at: Date.now() });
    const path = url.split("?")[0] ?? "/";
    if (req.method === "GET" && /[?&]watch=(true|1)/.test(url)) {
      res.writeHead(200, { "content-type": "application/json" });
      res.flushHeaders();
      open.set(res, path);
      res.on("close", () => open.delete(res));
      return;
    }
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
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const kubeconfigPath = join(mkdtempSync(join(tmpdir(), "rekindle-scripted-api-")), "kubeconfig");
  writeFileSync(
    kubeconfigPath,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{ name: s, cluster: { server: "${url}", insecure-skip-tls-verify: true } }]`,
      "users: [{ name: s, user: { token: upstream-token } }]",
      "contexts: [{ name: s, context: { cluster: s, user: s } }]",
      "current-context: s",
      "",
    ].join("\n"),
  );
  const matching = (prefix: string) =>
    [...open].filter(([, path]) => path.startsWith(prefix)).map(([res]) => res);
  return {
    url,
    kubeconfigPath,
    requests,
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
