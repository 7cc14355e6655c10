// Proof that the sim provider reproduces node loss as a real cluster does (fast profile, 3 workers
// in 2 zones): every assertion reads the real API of a real control plane.
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SIM_CSI_DRIVER, SimCluster } from "../../lib/cluster/sim/cluster.js";
import { SIM_NODE_BOOT_MS } from "../../lib/cluster/sim/kubelet/node-power.js";
import { k8s, isPodReady, nodeConditionStatus } from "../../lib/kube/client.js";
import {
  hasTaint,
  OUT_OF_SERVICE_TAINT,
  readNode,
  UNREACHABLE_TAINT,
  volumeAttachmentsFor,
} from "../../lib/kube/queries.js";
import { addTaint, removeTaint } from "../../lib/kube/taints.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import { deployNodeLossWorkloads, listPods, type DeployedWorkloads } from "../../lib/workloads/deploy.js";
import { testRunDir } from "../support/run-dir.js";
import { destroyLeavingNothing } from "../support/sim-leftovers.js";

describe("sim provider: node loss on a real control plane (fast profile)", function () {
  let cluster: SimCluster | undefined;
  let kc: k8s.KubeConfig;
  let workloads: DeployedWorkloads;
  let lostNode: string;
  let faultAt = 0;
  const namespace = "node-loss";

  before(async function () {
    cluster = await SimCluster.start({
      name: "it-node-loss",
      root: join(testRunDir("sim-node-loss"), "cluster"),
      workers: 3,
      zones: 2,
      profile: TIMING_PROFILES.fast,
      progress: consoleProgress(),
    });
    kc = cluster.kubeConfig();
    workloads = await deployNodeLossWorkloads(kc, { namespace, runId: cluster.runId });
    lostNode = workloads.statefulSetNode;
  });

  after(async function () {
    // Nothing the test started may outlive it.
    if (cluster) await destroyLeavingNothing(cluster);
  });

  it("registers 3 workers across 2 zones with the attach-detach annotation and a providerID", async function () {
    const nodes = (await kc.makeApiClient(k8s.CoreV1Api).listNode()).items;
    expect(nodes.map((n) => n.metadata?.name).sort()).to.deep.equal(["worker-1", "worker-2", "worker-3"]);
    const zones = new Set(nodes.map((n) => n.metadata?.labels?.["topology.kubernetes.io/zone"]));
    expect([...zones].sort()).to.deep.equal(["zone-a", "zone-b"]);
    for (const node of nodes) {
      expect(node.spec?.providerID).to.equal(`kwok://${node.metadata?.name ?? ""}`);
      expect(node.metadata?.annotations?.["volumes.kubernetes.io/controller-managed-attach-detach"]).to.equal(
        "true",
      );
      expect(nodeConditionStatus(node, "Ready")).to.equal("True");
    }
  });

  it("reports the pinned Kubernetes version from the apiserver", async function () {
    const version = await kc.makeApiClient(k8s.VersionApi).getCode();
    expect(version.gitVersion).to.equal(cluster!.state.binaries.versions.kubernetes);
  });

  it("puts pods of both workloads on one node, with the volume attached there", async function () {
    const web = await listPods(kc, namespace, "web");
    expect(
      web.some((p) => p.spec?.nodeName === lostNode),
      "a Deployment pod shares the StatefulSet pod's node",
    ).to.equal(true);
    const attachments = await volumeAttachmentsFor(kc, workloads.volumeName);
    expect(attachments.map((va) => [va.spec.nodeName, va.status?.attached])).to.deep.equal([
      [lostNode, true],
    ]);
  });

  it("reports the mounted volume in node.status.volumesInUse, as a kubelet does, on that node only", async function () {
    const handle = (
      await kc.makeApiClient(k8s.CoreV1Api).readPersistentVolume({ name: workloads.volumeName })
    ).spec?.csi?.volumeHandle;
    const unique = `kubernetes.io/csi/${SIM_CSI_DRIVER}^${handle ?? "?"}`;
    const inUse = await pollUntil(
      async () => {
        const v = (await readNode(kc, lostNode)).status?.volumesInUse ?? [];
        return v.length > 0 ? v : undefined;
      },
      { what: `volumesInUse on ${lostNode}`, timeoutMs: 10_000 },
    );
    expect(inUse).to.deep.equal([unique]);
    for (const other of cluster!.nodeNames().filter((n) => n !== lostNode)) {
      expect((await readNode(kc, other)).status?.volumesInUse ?? [], other).to.deep.equal([]);
    }
  });

  it("restarts a worker's kwok a second after it dies, as systemd restarts a kubelet; its Lease is renewed again", async function () {
    // kwok v0.8.0 can die at start (a concurrent map write in its CEL setup): the restart loop
    // around it (supervised.ts) is what brings such a node back. Killing kwok alone, not its
    // loop, is that crash; node loss kills both (the next test).
    const other = cluster!.nodeNames().find((n) => n !== lostNode)!;
    const record = cluster!.state.nodes.find((n) => n.name === other);
    const loop = record?.process;
    expect(loop, `${other}'s process`).to.not.equal(undefined);
    const children = () =>
      readFileSync(`/proc/${loop!.pid}/task/${loop!.pid}/children`, "utf8")
        .trim()
        .split(/\s+/)
        .filter(Boolean);
    const [kwok] = children();
    expect(kwok, `the kwok under ${other}'s restart loop`).to.match(/^\d+$/);
    const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
    const lease = () => coordination.readNamespacedLease({ name: other, namespace: "kube-node-lease" });
    const holderBefore = (await lease()).spec?.holderIdentity;
    process.kill(Number(kwok), "SIGKILL");
    const restarted = await pollUntil(
      () => {
        const now = children().filter((pid) => pid !== kwok);
        return Promise.resolve(now.length > 0 ? now : undefined);
      },
      { what: `a new kwok under ${other}'s loop`, timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(restarted).to.have.length(1);
    // The new kwok draws a new holder identity: it takes the Lease over once the old one expires.
    const leaseMs = cluster!.profile.nodeLeaseDurationSeconds * 1_000;
    const holderAfter = await pollUntil(
      async () => {
        const holder = (await lease()).spec?.holderIdentity;
        return holder && holder !== holderBefore ? holder : undefined;
      },
      { what: `${other}'s Lease renewed by its new kwok`, timeoutMs: leaseMs + 10_000, intervalMs: 250 },
    );
    expect(holderAfter).to.not.equal(holderBefore);
    expect(readFileSync(record!.kwok!.logPath, "utf8")).to.include(
      "exited with code 137; restarting in 1 s, as systemd restarts a kubelet",
    );
    await pollUntil(
      async () => (nodeConditionStatus(await readNode(kc, other), "Ready") === "True" ? true : undefined),
      {
        what: `${other} Ready`,
        timeoutMs: 30_000,
      },
    );
  });

  it("marks the stopped node Ready=Unknown within the profile's grace period", async function () {
    const profile = cluster!.profile;
    await cluster!.stopNode(lostNode);
    faultAt = Date.now();
    await pollUntil(
      async () =>
        nodeConditionStatus(await readNode(kc, lostNode), "Ready") === "Unknown" ? true : undefined,
      {
        what: `${lostNode} Ready=Unknown`,
        timeoutMs: 120_000,
        intervalMs: 100,
      },
    );
    const elapsedS = (Date.now() - faultAt) / 1000;
    const renewS = profile.nodeLeaseDurationSeconds / 4;
    // Last renewal happened up to one renew interval before the kill; the controller checks every period.
    const lower = profile.nodeMonitorGracePeriodSeconds - renewS - 1;
    const upper = profile.nodeMonitorGracePeriodSeconds + profile.nodeMonitorPeriodSeconds + 5;
    expect(elapsedS, `Ready=Unknown after ${elapsedS.toFixed(1)} s`).to.be.within(lower, upper);
  });

  it("taints it node.kubernetes.io/unreachable:NoExecute", async function () {
    await pollUntil(
      async () => (hasTaint(await readNode(kc, lostNode), UNREACHABLE_TAINT, "NoExecute") ? true : undefined),
      {
        what: `${lostNode} unreachable:NoExecute taint`,
        timeoutMs: 30_000,
      },
    );
  });

  it("brings the Deployment back Ready on other nodes", async function () {
    await pollUntil(
      async () => {
        const ready = (await listPods(kc, namespace, "web")).filter(
          (p) => isPodReady(p) && !p.metadata?.deletionTimestamp && p.spec?.nodeName !== lostNode,
        );
        return ready.length >= 2 ? ready : undefined;
      },
      { what: "2 Deployment replicas Ready off the lost node", timeoutMs: 120_000 },
    );
  });

  it("leaves the StatefulSet pod Terminating on the lost node with its VolumeAttachment in place", async function () {
    const terminating = await pollUntil(
      async () =>
        (await listPods(kc, namespace, "db")).find(
          (p) => p.metadata?.deletionTimestamp !== undefined && p.spec?.nodeName === lostNode,
        ),
      { what: "the StatefulSet pod to be marked for deletion", timeoutMs: 60_000 },
    );
    // Observe for a bounded time: with no kubelet nothing may confirm the deletion.
    const observeMs = 3 * 20_000; // three PodGC periods
    const until = Date.now() + observeMs;
    while (Date.now() < until) {
      const pods = await listPods(kc, namespace, "db");
      expect(pods.map((p) => p.metadata?.uid)).to.deep.equal([terminating.metadata?.uid]);
      const attachments = await volumeAttachmentsFor(kc, workloads.volumeName);
      expect(attachments.map((va) => va.spec.nodeName)).to.deep.equal([lostNode]);
      // The dead kubelet's last report stands: the volume is still "in use" there.
      expect((await readNode(kc, lostNode)).status?.volumesInUse ?? []).to.have.length(1);
      await sleep(2_000);
    }
  });

  it("after a hand-applied out-of-service taint, moves the StatefulSet pod and its volume to another node", async function () {
    const added = await addTaint(kc, lostNode, {
      key: OUT_OF_SERVICE_TAINT,
      value: "nodeshutdown",
      effect: "NoExecute",
    });
    expect(added).to.equal(true);
    const moved = await pollUntil(
      async () =>
        (await listPods(kc, namespace, "db")).find(
          (p) => isPodReady(p) && p.spec?.nodeName !== lostNode && !p.metadata?.deletionTimestamp,
        ),
      { what: "the StatefulSet pod Ready on another node", timeoutMs: 120_000 },
    );
    const newNode = moved.spec?.nodeName ?? "";
    const attachments = await pollUntil(
      async () => {
        const vas = await volumeAttachmentsFor(kc, workloads.volumeName);
        return vas.length === 1 && vas[0]?.spec.nodeName === newNode && vas[0].status?.attached === true
          ? vas
          : undefined;
      },
      { what: `a single attached VolumeAttachment on ${newNode}`, timeoutMs: 60_000 },
    );
    expect(attachments[0]?.spec.nodeName).to.not.equal(lostNode);
  });

  it("returns the node to Ready when it starts again, and the taint can be lifted", async function () {
    // A powered-off node boots before its kubelet (here, its kwok) runs, as a kind node does.
    const powerOnAt = Date.now();
    const started = cluster!.startNode(lostNode);
    await sleep(SIM_NODE_BOOT_MS / 2);
    expect(
      SimCluster.open(cluster!.layout.root).nodeRunning(lostNode),
      "running halfway through its boot",
    ).to.equal(false);
    await started;
    expect(Date.now() - powerOnAt).to.be.at.least(SIM_NODE_BOOT_MS);
    expect(SimCluster.open(cluster!.layout.root).nodeRunning(lostNode), "running once started").to.equal(
      true,
    );
    await pollUntil(
      async () => (nodeConditionStatus(await readNode(kc, lostNode), "Ready") === "True" ? true : undefined),
      {
        what: `${lostNode} Ready again`,
        timeoutMs: 60_000,
      },
    );
    expect(await removeTaint(kc, lostNode, OUT_OF_SERVICE_TAINT)).to.equal(true);
    await pollUntil(
      async () => (hasTaint(await readNode(kc, lostNode), UNREACHABLE_TAINT) ? undefined : true),
      {
        what: `${lostNode} unreachable taint removed by the node lifecycle controller`,
        timeoutMs: 30_000,
      },
    );
  });
});
