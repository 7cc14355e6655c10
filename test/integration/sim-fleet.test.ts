// Proof that a worker in a shared kwok (a "fleet" worker of a large sim cluster) can still be lost,
// partitioned and returned on its own: 12 workers in 2 zones, the first 2 with their own kwok, the
// other 10 in one shared kwok per zone (fast profile). Every assertion reads the real API.
import { expect } from "chai";
import { join } from "node:path";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { RekindleError } from "../../lib/errors.js";
import { SimCluster } from "../../lib/cluster/sim/cluster.js";
import { SIM_FILLER_NAMESPACE } from "../../lib/cluster/sim/boot/filler.js";
import { SIM_KWOK_GROUP_LABEL } from "../../lib/cluster/sim/kubelet/kwok-groups.js";
import { k8s, nodeConditionStatus } from "../../lib/kube/client.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { pollUntil } from "../../lib/util/time.js";
import { testRunDir } from "../support/run-dir.js";
import { destroyLeavingNothing } from "../support/sim-leftovers.js";

const profile = TIMING_PROFILES.fast;
/** Lost: the controller's grace after the last renewal (one renewal interval at most), plus slack. */
const LOST_WITHIN_MS =
  profile.nodeMonitorGracePeriodSeconds * 1000 +
  (profile.nodeLeaseDurationSeconds * 1000) / 4 +
  profile.slackMs;
/** Back: the label restored, kwok renews and rewrites Ready at once (measured about 1.2 s). */
const BACK_WITHIN_MS = 10_000;

describe("sim provider: fleet workers in shared kwoks (fast profile)", function () {
  let cluster: SimCluster | undefined;
  let core: k8s.CoreV1Api;
  let coordination: k8s.CoordinationV1Api;

  before(async function () {
    cluster = await SimCluster.start({
      name: "it-fleet",
      root: join(testRunDir("sim-fleet"), "cluster"),
      workers: 12,
      zones: 2,
      dedicatedKwoks: 2,
      podsPerNode: 2,
      profile,
      progress: consoleProgress(),
    });
    core = cluster.kubeConfig().makeApiClient(k8s.CoreV1Api);
    coordination = cluster.kubeConfig().makeApiClient(k8s.CoordinationV1Api);
  });

  after(async function () {
    if (cluster) await destroyLeavingNothing(cluster);
  });

  const ready = async (name: string) => nodeConditionStatus(await core.readNode({ name }), "Ready");
  const renewedAt = async (name: string) =>
    new Date(
      (await coordination.readNamespacedLease({ name, namespace: "kube-node-lease" })).spec?.renewTime ?? 0,
    ).getTime();

  it("plays 10 fleet workers with 2 kwok processes, each node Ready with its own address and filler pods", async function () {
    expect(cluster!.state.kwokGroups?.map((g) => g.name)).to.deep.equal(["zone-a-1", "zone-b-1"]);
    const nodes = (await core.listNode()).items;
    const fleet = nodes.filter((n) => n.metadata?.labels?.[SIM_KWOK_GROUP_LABEL] !== undefined);
    expect(fleet).to.have.length(10);
    for (const node of nodes)
      expect(nodeConditionStatus(node, "Ready"), node.metadata?.name).to.equal("True");
    const ips = nodes.map((n) => n.status?.addresses?.find((a) => a.type === "InternalIP")?.address);
    expect(new Set(ips).size).to.equal(12);
    const filler = (await core.listNamespacedPod({ namespace: SIM_FILLER_NAMESPACE })).items;
    expect(filler.filter((p) => p.status?.phase === "Running")).to.have.length(20);
    expect(new Set(filler.map((p) => p.spec?.nodeName)).size).to.equal(10);
  });

  it("loses one fleet node alone and brings it back", async function () {
    const lost = "worker-3"; // zone-a, shares its kwok with worker-5, -7, -9, -11
    const neighbour = "worker-5";
    await cluster!.stopNode(lost);
    const stoppedAt = Date.now();
    await pollUntil(async () => ((await ready(lost)) === "Unknown" ? true : undefined), {
      what: `${lost} Ready=Unknown`,
      timeoutMs: LOST_WITHIN_MS,
    });
    // Its shared kwok renews no more for it, and still does for its neighbour.
    const lastRenewal = await renewedAt(lost);
    expect(lastRenewal).to.be.lessThan(stoppedAt + (2 * (profile.nodeLeaseDurationSeconds * 1000)) / 4);
    expect(await ready(neighbour)).to.equal("True");
    expect(await renewedAt(neighbour)).to.be.greaterThan(stoppedAt);
    expect(cluster!.status().nodes.find((n) => n.name === lost)).to.include({
      power: "stopped",
      processRunning: false,
    });

    const startedAt = Date.now();
    await cluster!.startNode(lost);
    await pollUntil(async () => ((await ready(lost)) === "True" ? true : undefined), {
      what: `${lost} Ready again`,
      timeoutMs: BACK_WITHIN_MS,
    });
    expect(await renewedAt(lost)).to.be.greaterThan(startedAt - 1000);
    expect(cluster!.status().nodes.find((n) => n.name === lost)).to.include({
      power: "running",
      processRunning: true,
    });
  });

  it("partitions one fleet node and heals it, the machine staying on meanwhile", async function () {
    const node = "worker-4"; // zone-b
    await cluster!.partitionNode(node);
    expect(cluster!.status().nodes.find((n) => n.name === node)).to.include({
      power: "partitioned",
      processRunning: true,
    });
    await pollUntil(async () => ((await ready(node)) === "Unknown" ? true : undefined), {
      what: `${node} Ready=Unknown`,
      timeoutMs: LOST_WITHIN_MS,
    });
    await cluster!.healNode(node);
    await pollUntil(async () => ((await ready(node)) === "True" ? true : undefined), {
      what: `${node} Ready after the heal`,
      timeoutMs: BACK_WITHIN_MS,
    });
    // Every zone Normal again: the wait a scenario makes before its fault returns.
    await cluster!.waitForZonesNormal();
  });

  it("re-registers one fleet node under a new UID, played by its shared kwok again", async function () {
    const node = "worker-6"; // zone-b
    const { oldUid, newUid } = await cluster!.reregisterNode(node);
    expect(newUid).to.not.equal(oldUid);
    await pollUntil(async () => ((await ready(node)) === "True" ? true : undefined), {
      what: `${node} Ready after re-registration`,
      timeoutMs: BACK_WITHIN_MS,
    });
    const labels = (await core.readNode({ name: node })).metadata?.labels ?? {};
    expect(labels[SIM_KWOK_GROUP_LABEL]).to.equal("zone-b-1");
    expect(cluster!.status().nodes.find((n) => n.name === node)).to.include({
      power: "running",
      processRunning: true,
    });
  });

  it("stops a zone's nodes in one batch (fleet and own-kwok nodes alike) and starts them in one; a bad name touches nothing", async function () {
    const zone = ["worker-1", "worker-3", "worker-5", "worker-7"]; // zone-a: worker-1 has its own kwok
    const neighbour = "worker-9"; // zone-a too, left running
    const bad = await cluster!.stopNodes(["worker-3", "worker-99"]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(bad, "a batch with an unknown node").to.be.instanceOf(RekindleError);
    expect((bad as RekindleError).message).to.include("worker-99");
    expect(cluster!.status().nodes.find((n) => n.name === "worker-3")).to.include({ power: "running" });

    const told: string[] = [];
    await cluster!.stopNodes(zone, { onEach: (node) => told.push(node) });
    const stoppedAt = Date.now();
    expect([...told].sort()).to.deep.equal([...zone].sort());
    for (const node of zone)
      expect(
        cluster!.status().nodes.find((n) => n.name === node),
        node,
      ).to.include({
        power: "stopped",
        processRunning: false,
      });
    await pollUntil(
      async () => ((await Promise.all(zone.map(ready))).every((r) => r === "Unknown") ? true : undefined),
      { what: "the zone's stopped nodes Ready=Unknown", timeoutMs: LOST_WITHIN_MS },
    );
    expect(await ready(neighbour)).to.equal("True");
    expect(await renewedAt(neighbour)).to.be.greaterThan(stoppedAt);

    const startedAt = Date.now();
    await cluster!.startNodes(zone);
    await pollUntil(
      async () => ((await Promise.all(zone.map(ready))).every((r) => r === "True") ? true : undefined),
      { what: "the zone's nodes Ready again", timeoutMs: BACK_WITHIN_MS },
    );
    for (const node of zone) {
      expect(await renewedAt(node), node).to.be.greaterThan(startedAt - 1000);
      expect(
        cluster!.status().nodes.find((n) => n.name === node),
        node,
      ).to.include({
        power: "running",
        processRunning: true,
      });
    }
    await cluster!.waitForZonesNormal();
  });
});
