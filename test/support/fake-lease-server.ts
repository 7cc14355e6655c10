// A minimal coordination.k8s.io Lease endpoint for leader election unit tests: get, create and
// replace of Leases in memory, with resourceVersion conflicts as the apiserver gives them. `fail`
// makes every request answer 500 (the API server away).
import { createServer, type IncomingMessage, type Server } from "node:http";
import { k8s } from "../../lib/kube/client.js";

interface StoredLease {
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec: Record<string, unknown>;
}

export class FakeLeaseServer {
  readonly leases = new Map<string, StoredLease>();
  fail = false;
  #server: Server | undefined;
  #version = 1;
  #port = 0;

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      void this.#handle(req).then(({ status, body }) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    const address = this.#server.address();
    this.#port = typeof address === "object" && address ? address.port : 0;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  }

  kubeConfig(): k8s.KubeConfig {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "fake", server: `http://127.0.0.1:${this.#port}`, skipTLSVerify: true }],
      users: [{ name: "u" }],
      contexts: [{ name: "c", cluster: "fake", user: "u" }],
      currentContext: "c",
    });
    return kc;
  }

  async #handle(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (this.fail) return { status: 500, body: { kind: "Status", message: "away" } };
    const match = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/?]+))?/.exec(
      req.url ?? "",
    );
    if (!match) return { status: 404, body: { kind: "Status", reason: "NotFound" } };
    const namespace = match[1] ?? "";
    const body =
      chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as StoredLease) : undefined;
    const key = `${namespace}/${match[2] ?? body?.metadata.name ?? ""}`;
    const current = this.leases.get(key);
    if (req.method === "GET") {
      return current
        ? { status: 200, body: current }
        : { status: 404, body: { kind: "Status", reason: "NotFound", code: 404 } };
    }
    if (!body) return { status: 400, body: {} };
    if (req.method === "POST") {
      if (current) return { status: 409, body: { kind: "Status", reason: "AlreadyExists", code: 409 } };
    } else if (req.method === "PUT") {
      if (!current || body.metadata.resourceVersion !== current.metadata.resourceVersion) {
        return { status: 409, body: { kind: "Status", reason: "Conflict", code: 409 } };
      }
    } else {
      return { status: 405, body: {} };
    }
    const stored: StoredLease = {
      metadata: { ...body.metadata, namespace, resourceVersion: String(++this.#version) },
      spec: body.spec,
    };
    this.leases.set(key, stored);
    return { status: req.method === "POST" ? 201 : 200, body: stored };
  }
}
