// `rekindle controller` on a fresh sim cluster (no NodeFence CRD): a bad fence configuration and a
// missing CRD are refused at start with a clear message and exit code, nothing left listening;
// with --sim-cluster the CRD is installed and the controller runs, /healthz answering 200; with
// --power-on-after-fence it powers the fenced node back on.
import { expect } from "chai";
import { execa } from "execa";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { SimCluster } from "../../lib/cluster/sim/cluster.js";
import { NODE_FENCE_CRD } from "../../lib/controller/crd.js";
import {
  NODE_FENCE_GROUP,
  NODE_FENCE_PLURAL,
  NODE_FENCE_VERSION,
  type NodeFence,
} from "../../lib/controller/fence-state.js";
import { k8s } from "../../lib/kube/client.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { httpGet } from "../../lib/util/http.js";
import { freeLoopbackPorts } from "../../lib/util/ports.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { pollUntil } from "../../lib/util/time.js";
import { listeningOn } from "../support/assertions.js";
import { testRunDir } from "../support/run-dir.js";

const bin = join(PROJECT_ROOT, "bin", "rekindle.js");

describe("rekindle controller start-up on a fresh sim cluster", function () {
  let cluster: SimCluster | undefined;
  let dir = "";

  before(async function () {
    dir = testRunDir("controller-startup");
    cluster = await SimCluster.start({
      name: "it-controller-startup",
      root: join(dir, "cluster"),
      workers: 1,
      zones: 1,
      profile: TIMING_PROFILES.fast,
      progress: consoleProgress(),
    });
  });

  after(async function () {
    await cluster?.destroy();
  });

  const controller = (...args: string[]) =>
    execa(process.execPath, [bin, "controller", ...args], { reject: false, timeout: 60_000 });

  it("refuses a bad fence configuration with exit code 2, naming each problem, nothing listening", async function () {
    const config = join(dir, "bad-fence.yaml");
    writeFileSync(
      config,
      [
        "templates:",
        "  ipmi: { driver: fence-agnt, options: { agent: fence_ipmilan } }",
        "  hook: { driver: webhook, options: { url: 'http://fencer.example' } }",
        "  bmc2: { driver: redfish, options: { url: 'https://bmc.example', inscure: true }, secretRef: { name: s } }",
        "defaultTemplate: bmc",
        "",
      ].join("\n"),
    );
    const [port = 0] = await freeLoopbackPorts(1);
    const result = await controller(
      "--sim-cluster",
      cluster!.layout.root,
      "--fence-config",
      config,
      "--metrics-port",
      String(port),
    );
    expect(result.exitCode, result.stderr).to.equal(2);
    expect(result.stderr)
      .to.include(`invalid fence configuration ${config}`)
      .and.include('templates.ipmi.driver: unknown fence driver "fence-agnt"')
      .and.include('templates.bmc2: unknown option "inscure"')
      .and.include("templates.hook: needs an https:// url")
      .and.include('defaultTemplate: names template "bmc", which does not exist; valid: ipmi, hook, bmc2');
    expect(await listeningOn(port)).to.equal(false);
  });

  it("without the CRD and without --install-crd: exit 1 naming the CRD and how to install it, in one line per fact", async function () {
    const config = join(dir, "manual-fence.yaml");
    writeFileSync(config, "templates: { manual: { driver: manual } }\ndefaultTemplate: manual\n");
    const [port = 0] = await freeLoopbackPorts(1);
    const result = await controller(
      "--kubeconfig",
      cluster!.kubeconfigPath,
      "--fence-config",
      config,
      "--metrics-port",
      String(port),
    );
    expect(result.exitCode, result.stderr).to.equal(1);
    expect(result.stderr)
      .to.include(`the NodeFence CRD (${NODE_FENCE_CRD}) is not installed`)
      .and.include("kubectl apply -f")
      .and.include("--install-crd")
      .and.not.include("Headers");
    expect(await listeningOn(port)).to.equal(false);
  });

  it("with --sim-cluster (no kubeconfig): installs the CRD, runs, /healthz 200, exits 0 on SIGTERM", async function () {
    const [port = 0] = await freeLoopbackPorts(1);
    const child = execa(
      process.execPath,
      [bin, "controller", "--sim-cluster", cluster!.layout.root, "--metrics-port", String(port)],
      { reject: false, buffer: false },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    try {
      await pollUntil(
        async () => {
          if (child.exitCode !== null) throw new Error(`controller exited early: ${stderr}`);
          const answer = await httpGet(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
          return answer?.status === 200 ? true : undefined;
        },
        { what: "the controller's /healthz 200", timeoutMs: 60_000, intervalMs: 250 },
      );
      expect(stderr).to.include(`installed the NodeFence CRD (${NODE_FENCE_CRD})`);
      expect(stderr).to.include("fencing checked for 1 nodes");
    } finally {
      child.kill("SIGTERM");
      const result = await child;
      expect(result.exitCode, stderr).to.equal(0);
    }
    expect(await listeningOn(port)).to.equal(false);
  });

  it("--power-on-after-fence powers the fenced node back on once its driver reports it off", async function () {
    const kc = cluster!.kubeConfig();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    // The controller fences only a node that holds something to release.
    await core.createNamespace({ body: { metadata: { name: "power-on" } } });
    await core.createNamespacedPod({
      namespace: "power-on",
      body: {
        metadata: { name: "occupant" },
        spec: { nodeName: "worker-1", containers: [{ name: "c", image: "registry.k8s.io/pause:3.10.1" }] },
      },
    });
    await pollUntil(
      async () =>
        (await core.readNamespacedPod({ namespace: "power-on", name: "occupant" })).status?.phase ===
        "Running"
          ? true
          : undefined,
      { what: "the occupant pod Running", timeoutMs: 30_000 },
    );
    const child = execa(
      process.execPath,
      [
        bin,
        "controller",
        "--sim-cluster",
        cluster!.layout.root,
        "--unhealthy-after",
        "6s",
        "--check-interval",
        "500ms",
        "--power-on-after-fence",
        "--metrics-port",
        "0",
      ],
      { reject: false, buffer: false },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    try {
      await pollUntil(() => Promise.resolve(stderr.includes("metrics on") ? true : undefined), {
        what: "the controller started",
        timeoutMs: 30_000,
      });
      await cluster!.stopNode("worker-1");
      // Nobody starts the node here: only the controller's power-on brings it back.
      const fence = await pollUntil(
        async () => {
          const f = (await kc
            .makeApiClient(k8s.CustomObjectsApi)
            .getClusterCustomObject({
              group: NODE_FENCE_GROUP,
              version: NODE_FENCE_VERSION,
              plural: NODE_FENCE_PLURAL,
              name: "worker-1",
            })
            .catch(() => undefined)) as NodeFence | undefined;
          return f?.status?.step === "recovery" && f.status.phase === "done" ? f : undefined;
        },
        { what: "worker-1 fenced, powered on and recovered", timeoutMs: 120_000, intervalMs: 500 },
      );
      expect(fence.status?.fencedAt).to.be.a("string");
      expect(cluster!.status().nodes.find((n) => n.name === "worker-1")?.processRunning).to.equal(true);
    } finally {
      child.kill("SIGTERM");
      const result = await child;
      expect(result.exitCode, stderr).to.equal(0);
    }
  });
});
