// The controller's API calls reuse their connections (lib/kube/shared-agents.ts): client-node opens
// a new TLS connection for every call. A real loopback HTTPS server counts the handshakes.
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { boundedKubeConfig } from "../../lib/kube/bounded-client.js";
import { k8s } from "../../lib/kube/client.js";
import { SharedAgents } from "../../lib/kube/shared-agents.js";
import { selfSignedLoopbackCertificate } from "../support/tls.js";

describe("API calls reuse their connections", function () {
  let server: https.Server;
  let kc: k8s.KubeConfig;
  let ca: Buffer;
  let handshakes = 0;

  before(async function () {
    const { key, cert } = await selfSignedLoopbackCertificate(mkdtempSync(join(tmpdir(), "agents-")));
    ca = readFileSync(cert);
    server = https.createServer({ key: readFileSync(key), cert: ca }, (req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ kind: "Node", apiVersion: "v1", metadata: { name: "a" } }));
    });
    server.on("secureConnection", () => (handshakes += 1));
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    const { port } = server.address() as AddressInfo;
    kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: `https://127.0.0.1:${port}`, caData: ca.toString("base64") }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
  });

  after(async function () {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  });

  const bounds = { timeoutMs: () => 5_000, signal: () => new AbortController().signal };
  const readNodes = async (client: k8s.CoreV1Api, n: number) => {
    for (let i = 0; i < n; i += 1) {
      expect((await client.readNode({ name: "a" })).metadata?.name).to.equal("a");
    }
  };

  it("without shared agents every call is a new TLS handshake (client-node's own behaviour)", async function () {
    handshakes = 0;
    await readNodes(boundedKubeConfig(kc, bounds).makeApiClient(k8s.CoreV1Api), 10);
    expect(handshakes).to.equal(10);
  });

  it("with them, calls in turn share one connection, and calls at once are not serialized", async function () {
    const agents = new SharedAgents();
    try {
      const client = boundedKubeConfig(kc, bounds, agents).makeApiClient(k8s.CoreV1Api);
      handshakes = 0;
      await readNodes(client, 10);
      expect(handshakes).to.equal(1);
      await Promise.all(Array.from({ length: 5 }, () => client.readNode({ name: "a" })));
      expect(handshakes).to.be.within(2, 5);
      const before = handshakes;
      await readNodes(client, 10);
      expect(handshakes, "the connections opened are kept").to.equal(before);
    } finally {
      agents.destroy();
    }
    // Destroyed: the server sees its connections go (nothing left open by the controller).
    const open = () =>
      new Promise<number>((counted) =>
        server.getConnections((_e, count) => {
          counted(count);
        }),
      );
    for (let i = 0; i < 50 && (await open()) > 0; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(await open()).to.equal(0);
  });

  it("keeps one agent per protocol and TLS identity, and leaves other agents (a proxy's) alone", function () {
    const agents = new SharedAgents();
    try {
      const trusting = (key: Buffer) => new https.Agent({ ca: key, servername: "a" });
      const first = agents.shared(trusting(ca));
      expect(agents.shared(trusting(ca))).to.equal(first);
      expect(agents.shared(trusting(Buffer.from("another CA")))).to.not.equal(first);
      expect(agents.shared(new http.Agent())).to.equal(agents.shared(new http.Agent()));
      class ProxyAgent extends http.Agent {}
      const proxy = new ProxyAgent();
      expect(agents.shared(proxy)).to.equal(proxy);
      expect(agents.shared(undefined)).to.equal(undefined);
    } finally {
      agents.destroy();
    }
  });
});
