// A stand-in Kubernetes API server on loopback (plain HTTP) for unit tests: each request is answered
// from a table of "METHOD /path" → handler; anything else is the apiserver's own 404 for a path it
// does not serve. Records every request, and writes a kubeconfig pointing at itself.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { k8s } from "../../lib/kube/client.js";

export interface FakeResponse {
  status?: number;
  body: unknown;
}

/** A handler returning undefined never answers (a hung API server). */
export type FakeRoutes = Record<string, (req: IncomingMessage) => FakeResponse | undefined>;

export interface FakeApiServer {
  url: string;
  kubeconfigPath: string;
  kc: k8s.KubeConfig;
  /** "METHOD /path?query" of every request, in order. */
  requests: string[];
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

export async function startFakeApiServer(routes: FakeRoutes): Promise<FakeApiServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method ?? ""} ${req.url ?? ""}`);
    const path = (req.url ?? "").split("?")[0] ?? "";
    const handler = routes[`${req.method ?? ""} ${path}`];
    if (!handler) {
      res.writeHead(404, { "content-type": "text/plain" }).end("404 page not found\n");
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
  return {
    url,
    kubeconfigPath,
    kc,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
