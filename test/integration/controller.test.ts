// The recovery controller against a real control plane with sim workers (fast profile): it fences
// a lost node, taints it out-of-service, frees its StatefulSet volume, and undoes all of it when the
// node returns; it does not fence a node that comes back in time, holds when a zone is mostly lost,
// resumes after a crash without fencing twice, and lets a node go that returns mid-fence.
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { expect } from "chai";
import { execa } from "execa";
import { join } from "node:path";
import { SimCluster } from "../../lib/cluster/sim/cluster.js";
import { DEFAULT_CONTROLLER_CONFIG, type ControllerConfig } from "../../lib/controller/config.js";
import { FENCING_TAINT, RecoveryController } from "../../lib/controller/controller.js";
import { ManualFenceDriver } from "../../lib/controller/drivers/manual.js";
import { LeaderElector } from "../../lib/controller/leader.js";
import { SimFenceDriver } from "../../lib/cluster/sim/fence-driver.js";
import type { FenceDriver } from "../../lib/controller/drivers/types.js";
import { EVENT_REASONS } from "../../lib/controller/events.js";
import { resolveFenceTarget, type FenceConfig } from "../../lib/controller/fence-config.js";
import {
  NODE_FENCE_GROUP,
  NODE_FENCE_PLURAL,
  NODE_FENCE_VERSION,
  type NodeFence,
} from "../../lib/controller/fence-state.js";
import { METRICS } from "../../lib/controller/metrics.js";
import { installNodeFenceCrd } from "../../lib/controller/crd.js";
import { applyManifestFile } from "../../lib/kube/apply.js";
import { k8s, isPodReady } from "../../lib/kube/client.js";
import {
  hasTaint,
  OUT_OF_SERVICE_TAINT,
  readNode,
  volumeAttachmentsFor,
  waitForNodeBack,
} from "../../lib/kube/queries.js";
import { isDaemonSetPod } from "../../lib/kube/pod-kinds.js";
import { deployPath, PROJECT_ROOT } from "../../lib/util/project-files.js";
import { httpGet } from "../../lib/util/http.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import { deployNodeLossWorkloads, listPods } from "../../lib/workloads/deploy.js";
import { testRunDir } from "../support/run-dir.js";

const SIM_FENCING: FenceConfig = { templates: { sim: { driver: "sim" } }, defaultTemplate: "sim" };

describe("recovery controller on the sim provider (fast profile)", function () {
  let cluster: SimCluster | undefined;
  let kc: k8s.KubeConfig;
  /** The controller's own identity: the ServiceAccount with deploy/controller/rbac.yaml's rights only. */
  let controllerKc: k8s.KubeConfig;
  const controllers: RecoveryController[] = [];

  function controller(
    overrides: Partial<ControllerConfig> = {},
    extra: { fenceConfig?: FenceConfig; drivers?: FenceDriver[]; haltBefore?: "taint"; leader?: string } = {},
  ): RecoveryController {
    const drivers = extra.drivers ?? [new SimFenceDriver(cluster!.layout.root)];
    const c = new RecoveryController({
      kc: controllerKc,
      config: {
        ...DEFAULT_CONTROLLER_CONFIG,
        unhealthyAfterMs: 6_000,
        checkIntervalMs: 500,
        identity: "test",
        ...overrides,
      },
      fenceConfig: extra.fenceConfig ?? SIM_FENCING,
      drivers: new Map(drivers.map((d) => [d.name, d])),
      ...(extra.haltBefore ? { haltBefore: extra.haltBefore } : {}),
      ...(extra.leader
        ? {
            leader: new LeaderElector({
              kc: controllerKc,
              namespace: "rekindle-system",
              identity: extra.leader,
              leaseDurationMs: 4_000,
              retryPeriodMs: 500,
            }),
          }
        : {}),
      log: (m) => {
        console.log(`      [controller] ${m}`);
      },
    });
    controllers.push(c);
    c.start();
    return c;
  }

  const fence = async (node: string): Promise<NodeFence | undefined> => {
    const list = (await kc.makeApiClient(k8s.CustomObjectsApi).listClusterCustomObject({
      group: NODE_FENCE_GROUP,
      version: NODE_FENCE_VERSION,
      plural: NODE_FENCE_PLURAL,
    })) as { items: NodeFence[] };
    return list.items.find((f) => f.spec.node === node);
  };
  const waitFence = (node: string, step: string, phase: string, timeoutMs = 60_000) =>
    pollUntil(
      async () => {
        const f = await fence(node);
        return f?.status?.step === step && f.status.phase === phase ? f : undefined;
      },
      { what: `NodeFence ${node} at ${step}/${phase}`, timeoutMs, intervalMs: 250 },
    );
  // fast profile: Lease renewed every 2 s.
  const waitBack = (node: string) => waitForNodeBack(kc, node, { freshWithinMs: 2_500, timeoutMs: 60_000 });

  // The controller fences only nodes that hold something to release: give a node a running pod.
  const occupy = async (node: string) => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: "ctl-occupants" } } }).catch(() => undefined);
    const name = `occupant-${node}-${Date.now()}`;
    await core.createNamespacedPod({
      namespace: "ctl-occupants",
      body: {
        metadata: { name },
        spec: { nodeName: node, containers: [{ name: "c", image: "registry.k8s.io/pause:3.10.1" }] },
      },
    });
    await pollUntil(
      async () =>
        (await core.readNamespacedPod({ namespace: "ctl-occupants", name })).status?.phase === "Running"
          ? true
          : undefined,
      { what: `pod ${name} Running on ${node}`, timeoutMs: 30_000 },
    );
  };

  before(async function () {
    // 5 workers in 2 zones: zone-a = worker-1, -3, -5; zone-b = worker-2, -4.
    cluster = await SimCluster.start({
      name: "it-controller",
      root: join(testRunDir("controller"), "cluster"),
      workers: 5,
      zones: 2,
      profile: TIMING_PROFILES.fast,
      progress: consoleProgress(),
    });
    kc = cluster.kubeConfig();
    await installNodeFenceCrd(kc);
    await applyManifestFile(kc, deployPath("controller", "rbac.yaml"));
    const token = await kc.makeApiClient(k8s.CoreV1Api).createNamespacedServiceAccountToken({
      name: "rekindle-controller",
      namespace: "rekindle-system",
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    controllerKc = new k8s.KubeConfig();
    controllerKc.loadFromOptions({
      clusters: [
        {
          name: "sim",
          server: cluster.apiserverUrl,
          caFile: cluster.layout.apiserverCertificate,
          skipTLSVerify: false,
        },
      ],
      users: [{ name: "rekindle-controller", token: token.status?.token ?? "" }],
      contexts: [{ name: "controller", cluster: "sim", user: "rekindle-controller" }],
      currentContext: "controller",
    });
  });

  afterEach(async function () {
    await Promise.all(controllers.splice(0).map((c) => c.stop()));
  });

  after(async function () {
    await cluster?.destroy();
  });

  it("recovers a StatefulSet with an RWO volume and a Deployment after node loss, then undoes everything when the node returns", async function () {
    const workloads = await deployNodeLossWorkloads(kc, { namespace: "ctl-recovery", runId: cluster!.runId });
    const lost = workloads.statefulSetNode;
    const c = controller();
    await cluster!.stopNode(lost);
    const faultAt = Date.now();
    const moved = await pollUntil(
      async () =>
        (await listPods(kc, "ctl-recovery", "db")).find(
          (p) => isPodReady(p) && p.spec?.nodeName !== lost && !p.metadata?.deletionTimestamp,
        ),
      { what: "the StatefulSet pod Ready on another node", timeoutMs: 90_000 },
    );
    const recoveredS = (Date.now() - faultAt) / 1000;
    console.log(
      `      StatefulSet with RWO volume Ready on ${moved.spec?.nodeName ?? "?"} ${recoveredS.toFixed(1)} s after the node stopped`,
    );
    const vas = await volumeAttachmentsFor(kc, workloads.volumeName);
    expect(vas.map((va) => va.spec.nodeName)).to.deep.equal([moved.spec?.nodeName]);
    const webReady = (await listPods(kc, "ctl-recovery", "web")).filter(
      (p) => isPodReady(p) && p.spec?.nodeName !== lost,
    );
    expect(webReady.length).to.equal(2);
    const node = await readNode(kc, lost);
    expect(hasTaint(node, OUT_OF_SERVICE_TAINT, "NoExecute")).to.equal(true);
    expect(hasTaint(node, FENCING_TAINT, "NoSchedule")).to.equal(true);
    const f = await fence(lost);
    expect(f?.status?.fencedAt, "fenced before tainted").to.be.a("string");
    expect(Date.parse(f?.status?.taintedAt ?? "")).to.be.at.least(Date.parse(f?.status?.fencedAt ?? ""));
    expect(await c.metrics.value(METRICS.fences, { result: "success" })).to.equal(1);
    // The node returns: taints go, the NodeFence finishes.
    await cluster!.startNode(lost);
    await waitFence(lost, "recovery", "done");
    const back = await readNode(kc, lost);
    expect(hasTaint(back, OUT_OF_SERVICE_TAINT)).to.equal(false);
    expect(hasTaint(back, FENCING_TAINT)).to.equal(false);
    const events = await kc
      .makeApiClient(k8s.CoreV1Api)
      .listNamespacedEvent({ namespace: "default", fieldSelector: `involvedObject.name=${lost}` });
    const reasons = events.items
      .filter((e) => e.source?.component === "rekindle-controller")
      .map((e) => e.reason);
    expect(reasons).to.include.members([
      EVENT_REASONS.nodeUnhealthy,
      EVENT_REASONS.fenceStarted,
      EVENT_REASONS.fenceSucceeded,
      EVENT_REASONS.outOfServiceTainted,
      EVENT_REASONS.nodeRecovered,
    ]);
    await kc.makeApiClient(k8s.CoreV1Api).deleteNamespace({ name: "ctl-recovery" });
  });

  it("does not fence a partition healed before unhealthyAfter", async function () {
    const before = (await fence("worker-4"))?.status?.detectedAt;
    const c = controller({ unhealthyAfterMs: 8_000 });
    await cluster!.partitionNode("worker-4");
    await sleep(4_000);
    await cluster!.healNode("worker-4");
    await sleep(10_000);
    // No new fence: none at all, or the one an earlier test left, unchanged.
    expect((await fence("worker-4"))?.status?.detectedAt).to.equal(before);
    expect(await c.metrics.value(METRICS.fences, { result: "success" })).to.equal(0);
    expect(hasTaint(await readNode(kc, "worker-4"), FENCING_TAINT)).to.equal(false);
  });

  it("holds when 2 of 3 workers of a zone are lost and maxUnhealthy allows 1 there, and says why", async function () {
    // An earlier test may have fenced (and finished) one of them: no new fence may start.
    const before3 = (await fence("worker-3"))?.status?.detectedAt;
    const before5 = (await fence("worker-5"))?.status?.detectedAt;
    // Both are lost before the controller looks (a zone outage), so it sees them together.
    await cluster!.stopNode("worker-3");
    await cluster!.stopNode("worker-5");
    await sleep(8_000);
    const c = controller({ maxUnhealthy: "40%" });
    try {
      await pollUntil(
        () =>
          c.metrics
            .value(METRICS.guardHolds, { reason: "ZoneBudget" })
            .then((holds) => (holds >= 2 ? true : undefined)),
        {
          what: "the guard to hold both nodes (ZoneBudget)",
          timeoutMs: 60_000,
        },
      );
      expect((await fence("worker-3"))?.status?.detectedAt).to.equal(before3);
      expect((await fence("worker-5"))?.status?.detectedAt).to.equal(before5);
      const events = await kc
        .makeApiClient(k8s.CoreV1Api)
        .listNamespacedEvent({ namespace: "default", fieldSelector: `reason=${EVENT_REASONS.guardHeld}` });
      expect(
        events.items.some(
          (e) => e.involvedObject.name === "worker-3" && (e.message ?? "").includes("zone zone-a"),
        ),
      ).to.equal(true);
    } finally {
      await c.stop();
      await cluster!.startNode("worker-3");
      await cluster!.startNode("worker-5");
      await waitBack("worker-3");
      await waitBack("worker-5");
    }
  });

  it("a leader that dies after the fence and before the taint is replaced by the standby, which finishes with no second fence", async function () {
    const first = controller({}, { haltBefore: "taint", leader: "replica-a" });
    await sleep(1_500); // replica-a takes the Lease first
    const second = controller({}, { leader: "replica-b" });
    await occupy("worker-2");
    await cluster!.stopNode("worker-2");
    await waitFence("worker-2", "power-management", "done");
    await sleep(2_000);
    // The standby does nothing while the leader lives.
    expect(hasTaint(await readNode(kc, "worker-2"), OUT_OF_SERVICE_TAINT)).to.equal(false);
    await first.stop(); // dies without releasing the Lease
    await waitFence("worker-2", "recovery", "running");
    expect(hasTaint(await readNode(kc, "worker-2"), OUT_OF_SERVICE_TAINT, "NoExecute")).to.equal(true);
    expect(await first.metrics.value(METRICS.fences, { result: "success" })).to.equal(1);
    expect(await second.metrics.value(METRICS.fences, { result: "success" })).to.equal(0);
    const lease = await kc
      .makeApiClient(k8s.CoordinationV1Api)
      .readNamespacedLease({ name: "rekindle-controller", namespace: "rekindle-system" });
    expect(lease.spec?.holderIdentity).to.equal("replica-b");
    await cluster!.startNode("worker-2");
    await waitFence("worker-2", "recovery", "done");
  });

  it("lets a node go that returns mid-fence: no out-of-service taint, nothing left behind", async function () {
    const manual: FenceConfig = { templates: { manual: { driver: "manual" } }, defaultTemplate: "manual" };
    const c = controller({}, { fenceConfig: manual, drivers: [new ManualFenceDriver(kc)] });
    await occupy("worker-1");
    await cluster!.stopNode("worker-1");
    // The manual driver waits for a person to confirm power-off; the node comes back first.
    await waitFence("worker-1", "power-management", "running");
    await cluster!.startNode("worker-1");
    await waitFence("worker-1", "recovery", "done");
    const node = await readNode(kc, "worker-1");
    expect(hasTaint(node, OUT_OF_SERVICE_TAINT)).to.equal(false);
    expect(hasTaint(node, FENCING_TAINT)).to.equal(false);
    expect((await fence("worker-1"))?.status?.taintedAt).to.equal(undefined);
    expect(await c.metrics.value(METRICS.fences, { result: "aborted" })).to.equal(1);
  });

  it("does not fence a lost node that holds nothing to release (empty, or shut down gracefully), and says so", async function () {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    // Empty of workloads: every worker runs the sim's node DaemonSets, which the controller leaves be.
    const pods = (await core.listPodForAllNamespaces()).items.filter(
      (p) => p.status?.phase !== "Failed" && p.status?.phase !== "Succeeded" && !isDaemonSetPod(p),
    );
    const empty = cluster!.nodeNames().find((n) => !pods.some((p) => p.spec?.nodeName === n));
    if (empty === undefined) throw new Error("test setup: every worker runs a workload pod; none is empty");
    const c = controller();
    await waitBack(empty);
    const earlierFence = await fence(empty); // from an earlier test, finished: must stay as it is
    await cluster!.stopNode(empty);
    await pollUntil(
      async () => {
        const events = await core.listNamespacedEvent({
          namespace: "default",
          fieldSelector: `involvedObject.name=${empty}`,
        });
        return events.items.find((e) => e.reason === EVENT_REASONS.nothingToRelease);
      },
      { what: `a ${EVENT_REASONS.nothingToRelease} event for ${empty}`, timeoutMs: 30_000 },
    );
    await sleep(2_000);
    expect((await fence(empty))?.metadata.resourceVersion).to.equal(earlierFence?.metadata.resourceVersion);
    expect(await c.metrics.value(METRICS.fences, { result: "success" })).to.equal(0);
    await cluster!.startNode(empty);
    await waitBack(empty);
  });

  it("reads fence credentials from the template's Secret, with the controller's own rights", async function () {
    await kc.makeApiClient(k8s.CoreV1Api).createNamespacedSecret({
      namespace: "rekindle-system",
      body: { metadata: { name: "bmc-credentials" }, stringData: { username: "admin", password: "s3cret" } },
    });
    const config: FenceConfig = {
      templates: {
        bmc: {
          driver: "redfish",
          options: { url: "https://{{node}}-bmc.example" },
          secretRef: { name: "bmc-credentials" },
        },
      },
      defaultTemplate: "bmc",
    };
    const resolved = await resolveFenceTarget(controllerKc, config, "worker-3", "rekindle-system");
    expect(resolved).to.deep.equal({
      driver: "redfish",
      target: {
        node: "worker-3",
        options: { url: "https://worker-3-bmc.example" },
        credentials: { username: "admin", password: "s3cret" },
      },
    });
  });

  it("runs as `rekindle controller` out-of-cluster: fences, serves /metrics, exits cleanly on SIGTERM", async function () {
    const bin = join(PROJECT_ROOT, "bin", "rekindle.js");
    const noConfig = await execa(
      process.execPath,
      [bin, "controller", "--kubeconfig", cluster!.kubeconfigPath],
      { reject: false },
    );
    expect(noConfig.exitCode).to.equal(2);
    expect(noConfig.stderr).to.include("no fence configuration").and.include("--fence-config");
    const child = execa(
      process.execPath,
      [
        bin,
        "controller",
        "--kubeconfig",
        cluster!.kubeconfigPath,
        "--sim-cluster",
        cluster!.layout.root,
        "--unhealthy-after",
        "6s",
        "--metrics-port",
        "0",
      ],
      {
        reject: false,
        buffer: false,
      },
    );
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let err = "";
        child.stderr.on("data", (chunk: Buffer) => {
          err += chunk.toString();
          const match = /metrics on [^\s]*:(\d+)\/metrics/.exec(err);
          if (match?.[1]) resolve(Number(match[1]));
        });
        void child.then(() => {
          reject(new Error(`controller exited early: ${err}`));
        });
      });
      await occupy("worker-4");
      await cluster!.stopNode("worker-4");
      await waitFence("worker-4", "recovery", "running");
      const metrics = await httpGet(`http://127.0.0.1:${port}/metrics`);
      expect(metrics.body).to.include('rekindle_fences_total{result="success"} 1');
      await cluster!.startNode("worker-4");
      await waitFence("worker-4", "recovery", "done");
    } finally {
      child.kill("SIGTERM");
      const result = await child;
      expect(result.exitCode).to.equal(0);
    }
  });
});
