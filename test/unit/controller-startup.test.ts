// `rekindle controller` checks the cluster before it starts (the NodeFence CRD, every fenceable
// node's template and Secret) against a stand-in API server; a refused start leaves nothing
// listening; /healthz answers the controller's health; API errors read as one line.
import { expect } from "chai";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { controllerCommand } from "../../lib/cli/controller-command.js";
import { ensureNodeFenceCrd, NODE_FENCE_CRD } from "../../lib/controller/crd.js";
import { fenceDriverRegistry, genericFenceDrivers } from "../../lib/controller/drivers/registry.js";
import type { FenceConfig } from "../../lib/controller/fence-config.js";
import { checkFenceTargets } from "../../lib/controller/fence-preflight.js";
import { ControllerMetrics } from "../../lib/controller/metrics.js";
import { errorMessage, RekindleError } from "../../lib/errors.js";
import { k8s } from "../../lib/kube/client.js";
import { isControlPlaneNode } from "../../lib/kube/queries.js";
import { httpGet } from "../../lib/util/http.js";
import { freeLoopbackPorts } from "../../lib/util/ports.js";
import { pollUntil } from "../../lib/util/time.js";
import { captureStderr, listeningOn, rekindleRejection } from "../support/assertions.js";
import {
  list,
  startFakeApiServer,
  status,
  type FakeApiServer,
  type FakeRoutes,
} from "../support/fake-apiserver.js";

const NODE_FENCES = "GET /apis/rekindle.dev/v1alpha1/nodefences";

function node(name: string, labels: Record<string, string> = {}): k8s.V1Node {
  return { metadata: { name, labels } };
}

function secret(data: Record<string, string>): { body: k8s.V1Secret } {
  return {
    body: {
      metadata: { name: "s" },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
    },
  };
}

const BMC_CONFIG: FenceConfig = {
  templates: {
    bmc: {
      driver: "redfish",
      options: { url: "https://{{node}}-bmc.example" },
      secretRef: { name: "bmc-credentials" },
    },
    other: { driver: "redfish", options: { url: "https://bmc.example" }, secretRef: { name: "missing" } },
  },
  nodes: { "worker-3": "other", "worker-9": "bmc" },
  defaultTemplate: "bmc",
};

describe("controller start-up: every fenceable node resolves", function () {
  let api: FakeApiServer;
  let bmcCredentials: Record<string, string> = { username: "admin", password: "pw" };

  before(async function () {
    api = await startFakeApiServer({
      "GET /api/v1/nodes": () =>
        list("NodeList", [
          node("worker-1"),
          node("worker-2", { "rekindle.dev/exclude": "" }),
          node("worker-3"),
          node("cp-old", { "node-role.kubernetes.io/master": "" }),
          node("etcd-1", { "node-role.kubernetes.io/etcd": "true" }),
        ]),
      "GET /api/v1/namespaces/rekindle-system/secrets/bmc-credentials": () => secret(bmcCredentials),
      "GET /api/v1/namespaces/rekindle-system/secrets/missing": () =>
        status(404, "NotFound", 'secrets "missing" not found'),
      "GET /api/v1/namespaces/other/secrets/forbidden": () =>
        status(403, "Forbidden", 'secrets "forbidden" is forbidden: User cannot get resource "secrets"'),
    });
  });

  after(async function () {
    await api.close();
  });

  const check = (fenceConfig: FenceConfig) =>
    checkFenceTargets({
      kc: api.kc,
      fenceConfig,
      drivers: fenceDriverRegistry(genericFenceDrivers(api.kc)),
      namespace: "rekindle-system",
      excludeLabel: "rekindle.dev/exclude",
    });

  it("names the node and the Secret that is missing, and skips control-plane and excluded nodes", async function () {
    const error = await rekindleRejection(check(BMC_CONFIG));
    expect(error.code).to.equal("INVALID_INPUT");
    expect(error.message)
      .to.include("the fence configuration does not fit the cluster's nodes")
      .and.include(
        'node worker-3: Secret rekindle-system/missing, named by fence template "other", does not exist',
      )
      .and.not.include("worker-1")
      .and.not.include("cp-old")
      .and.not.include("etcd-1")
      .and.not.include("worker-2");
  });

  it("names a Secret key the driver needs and lacks, and one the controller may not read", async function () {
    bmcCredentials = { username: "admin" };
    try {
      const error = await rekindleRejection(
        check({
          ...BMC_CONFIG,
          templates: {
            ...BMC_CONFIG.templates,
            other: {
              driver: "webhook",
              options: { url: "https://x.example" },
              secretRef: { name: "forbidden", namespace: "other" },
            },
          },
        }),
      );
      expect(error.message)
        .to.include(
          "node worker-1 (template bmc, driver redfish, Secret rekindle-system/bmc-credentials): credentials lack password",
        )
        .and.include("node worker-3: the controller may not read Secret other/forbidden")
        .and.include("HTTP 403 Forbidden");
    } finally {
      bmcCredentials = { username: "admin", password: "pw" };
    }
  });

  it("skips nodes the controller's --node-selector does not match: they are never fenced, so need no template", async function () {
    const result = await checkFenceTargets({
      kc: api.kc,
      fenceConfig: { templates: BMC_CONFIG.templates },
      drivers: fenceDriverRegistry(genericFenceDrivers(api.kc)),
      namespace: "rekindle-system",
      excludeLabel: "rekindle.dev/exclude",
      nodeSelector: "no-such-label",
    });
    expect(result.checked).to.deep.equal([]);
  });

  it("passes when every fenceable node resolves, reading each Secret once, and lists mapped nodes not in the cluster", async function () {
    api.requests.length = 0;
    const result = await check({ ...BMC_CONFIG, nodes: { "worker-9": "bmc" } });
    expect(result).to.deep.equal({ checked: ["worker-1", "worker-3"], unknownNodes: ["worker-9"] });
    expect(api.requests.filter((r) => r.includes("/secrets/"))).to.have.length(1);
  });
});

describe("controller start-up: the NodeFence CRD", function () {
  async function withApi(routes: FakeRoutes, run: (api: FakeApiServer) => Promise<void>): Promise<void> {
    const api = await startFakeApiServer(routes);
    try {
      await run(api);
    } finally {
      await api.close();
    }
  }

  it("is found served with a list of at most one NodeFence", async function () {
    await withApi({ [NODE_FENCES]: () => list("NodeFenceList", []) }, async (api) => {
      expect(await ensureNodeFenceCrd(api.kc, { install: false })).to.equal("served");
      expect(api.requests).to.deep.equal(["GET /apis/rekindle.dev/v1alpha1/nodefences?limit=1"]);
    });
  });

  it("missing, is a clear error naming the CRD and how to install it", async function () {
    await withApi({}, async (api) => {
      const error = await rekindleRejection(ensureNodeFenceCrd(api.kc, { install: false }));
      expect(error.code).to.equal("PRECONDITION");
      expect(error.message).to.include(`the NodeFence CRD (${NODE_FENCE_CRD}) is not installed`);
      expect(error.hint)
        .to.match(/kubectl apply -f \S+deploy\/controller\/crd\.yaml/)
        .and.include("--install-crd");
    });
  });

  it("a refusal or no API server at all is said in one line", async function () {
    await withApi(
      { [NODE_FENCES]: () => status(403, "Forbidden", "nodefences.rekindle.dev is forbidden") },
      async (api) => {
        const error = await rekindleRejection(ensureNodeFenceCrd(api.kc, { install: false }));
        expect(error.message).to.equal(
          `cannot list NodeFences at ${api.url}: HTTP 403 Forbidden: nodefences.rekindle.dev is forbidden`,
        );
      },
    );
    const [port = 1] = await freeLoopbackPorts(1);
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    const unreachable = await rekindleRejection(ensureNodeFenceCrd(kc, { install: false }));
    expect(unreachable.code).to.equal("UNREACHABLE");
    expect(unreachable.message)
      .to.include(`cannot reach http://127.0.0.1:${port}`)
      .and.include("ECONNREFUSED");
  });
});

describe("rekindle controller: refused starts leave nothing listening; /healthz tells the truth", function () {
  this.timeout(20_000);
  const dir = mkdtempSync(join(tmpdir(), "rekindle-controller-cli-"));
  const fenceYaml = join(dir, "fence.yaml");
  writeFileSync(
    fenceYaml,
    [
      "templates:",
      "  hook: { driver: webhook, options: { url: 'https://fencer.example' }, secretRef: { name: hook-token } }",
      "defaultTemplate: hook",
      "",
    ].join("\n"),
  );

  async function run(api: FakeApiServer, port: number, signal: AbortSignal, ...extra: string[]) {
    return captureStderr(() =>
      controllerCommand(
        [
          "--kubeconfig",
          api.kubeconfigPath,
          "--fence-config",
          fenceYaml,
          "--metrics-port",
          String(port),
          ...extra,
        ],
        signal,
      ),
    );
  }

  it("without the CRD: exits with the CRD named, metrics port never bound", async function () {
    const api = await startFakeApiServer({ "GET /api/v1/nodes": () => list("NodeList", [node("worker-1")]) });
    const [port = 0] = await freeLoopbackPorts(1);
    try {
      const { error } = await run(api, port, new AbortController().signal);
      expect((error as RekindleError).message).to.include(NODE_FENCE_CRD);
      expect(await listeningOn(port)).to.equal(false);
    } finally {
      await api.close();
    }
  });

  it("with a node whose Secret is missing: exits naming both, metrics port never bound", async function () {
    const api = await startFakeApiServer({
      [NODE_FENCES]: () => list("NodeFenceList", []),
      "GET /api/v1/nodes": () => list("NodeList", [node("worker-1")]),
    });
    const [port = 0] = await freeLoopbackPorts(1);
    try {
      const { error } = await run(api, port, new AbortController().signal);
      expect((error as RekindleError).code).to.equal("INVALID_INPUT");
      expect((error as RekindleError).message).to.include(
        'node worker-1: Secret rekindle-system/hook-token, named by fence template "hook", does not exist',
      );
      expect(await listeningOn(port)).to.equal(false);
    } finally {
      await api.close();
    }
  });

  it("runs when all is well: /healthz 200 once a pass completed; nothing left listening after stop", async function () {
    const api = await startFakeApiServer({
      [NODE_FENCES]: () => list("NodeFenceList", []),
      "GET /api/v1/nodes": () => list("NodeList", []),
      "GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases": () => list("LeaseList", []),
      "GET /api/v1/namespaces/rekindle-system/configmaps": () => list("ConfigMapList", []),
      "GET /apis/storage.k8s.io/v1/volumeattachments": () => list("VolumeAttachmentList", []),
    });
    const [port = 0] = await freeLoopbackPorts(1);
    const stop = new AbortController();
    const running = run(api, port, stop.signal, "--check-interval", "100ms", "--unhealthy-after", "1s");
    try {
      // 200 "starting" comes first (the loop runs, no pass yet: a liveness probe must not kill it);
      // a completed pass then says so.
      const healthy = await pollUntil(
        async () => {
          const answer = await httpGet(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
          return answer?.status === 200 && !answer.body.includes("starting") ? answer : undefined;
        },
        { what: "/healthz 200 after a pass", timeoutMs: 10_000, intervalMs: 50 },
      );
      expect(healthy.body).to.match(/^ok: active; last pass \d+ ms ago/);
    } finally {
      stop.abort();
      const { value, stderr } = await running;
      expect(value, stderr).to.equal(0);
      await api.close();
    }
    expect(await listeningOn(port)).to.equal(false);
  });
});

describe("/healthz and the metrics port", function () {
  it("answers 200 or 503 with the health function's message", async function () {
    let state = { ok: true, message: "last pass 12 ms ago" };
    const { server, port } = await new ControllerMetrics().serve({ port: 0, health: () => state });
    try {
      const ok = await httpGet(`http://127.0.0.1:${port}/healthz`);
      expect([ok.status, ok.body]).to.deep.equal([200, "ok: last pass 12 ms ago\n"]);
      state = { ok: false, message: "no pass completed for 40000 ms" };
      const bad = await httpGet(`http://127.0.0.1:${port}/healthz`);
      expect([bad.status, bad.body]).to.deep.equal([503, "unhealthy: no pass completed for 40000 ms\n"]);
    } finally {
      server.close();
    }
  });

  it("a port in use is a CONFLICT naming it, not an unhandled error", async function () {
    const { server, port } = await new ControllerMetrics().serve({ port: 0 });
    try {
      const error = await rekindleRejection(new ControllerMetrics().serve({ port }));
      expect(error.code).to.equal("CONFLICT");
      expect(error.message).to.equal(`cannot serve metrics on 127.0.0.1:${port}: EADDRINUSE`);
    } finally {
      server.close();
    }
  });
});

describe("control-plane nodes, by any of their role labels", function () {
  it("counts kubeadm's, the older master, RKE's controlplane and etcd, and kubernetes.io/role=master", function () {
    const controlPlane: Record<string, string>[] = [
      { "node-role.kubernetes.io/control-plane": "" },
      { "node-role.kubernetes.io/master": "" },
      { "node-role.kubernetes.io/controlplane": "true" },
      { "node-role.kubernetes.io/etcd": "true" },
      { "kubernetes.io/role": "master" },
    ];
    for (const labels of controlPlane) {
      expect(isControlPlaneNode(node("n", labels)), JSON.stringify(labels)).to.equal(true);
    }
    const workers: Record<string, string>[] = [
      {},
      { "node-role.kubernetes.io/worker": "" },
      { "kubernetes.io/role": "node" },
    ];
    for (const labels of workers) {
      expect(isControlPlaneNode(node("n", labels)), JSON.stringify(labels)).to.equal(false);
    }
  });
});

describe("API errors in one line", function () {
  it("from a Status body (text or object), from plain text, or from the status alone; never the headers", function () {
    const headers = { "audit-id": "123", "content-type": "application/json" };
    const statusBody = {
      kind: "Status",
      reason: "NotFound",
      message: 'nodefences.rekindle.dev "w" not found',
    };
    expect(errorMessage(new k8s.ApiException(404, "x", JSON.stringify(statusBody), headers))).to.equal(
      'HTTP 404 NotFound: nodefences.rekindle.dev "w" not found',
    );
    expect(errorMessage(new k8s.ApiException(404, "x", statusBody, headers))).to.equal(
      'HTTP 404 NotFound: nodefences.rekindle.dev "w" not found',
    );
    expect(
      errorMessage(new k8s.ApiException(404, "Unknown API Status Code!", "404 page not found\n", headers)),
    ).to.equal("HTTP 404: 404 page not found");
    expect(errorMessage(new k8s.ApiException(401, "Unauthorized", undefined, headers))).to.equal(
      "HTTP 401 Unauthorized",
    );
  });

  it("a RekindleError's description carries its cause in one line", function () {
    const cause = new k8s.ApiException(
      500,
      "x",
      JSON.stringify({ reason: "InternalError", message: "boom" }),
      {},
    );
    expect(new RekindleError("UNREACHABLE", "cannot list nodes", { cause }).describe()).to.equal(
      "error [UNREACHABLE]: cannot list nodes\n  cause: HTTP 500 InternalError: boom",
    );
  });
});
