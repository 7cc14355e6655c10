// The sim is not kinder than a cluster (fast profile, 2 workers): node agents run as DaemonSets on
// every worker, and the hostile-condition knobs have the effect a real cluster would show, read
// from the API: a kubelet clock behind (its Lease lags, the node stays Ready), a frozen
// kube-apiserver (no answer, then answers), a Node re-registered under a new UID.
import { expect } from "chai";
import { join } from "node:path";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { SimCluster } from "../../lib/cluster/sim/cluster.js";
import { NODE_PROXY_DAEMONSET, SIM_DAEMONSETS } from "../../lib/cluster/sim/boot/daemonsets.js";
import { SimClusterUnderTest } from "../../lib/cluster/sim/under-test.js";
import { RekindleError } from "../../lib/errors.js";
import { isPodReady, k8s, nodeConditionStatus } from "../../lib/kube/client.js";
import { isCriticalPod } from "../../lib/kube/pod-kinds.js";
import { readNode } from "../../lib/kube/queries.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { pollUntil, sleep, withTimeout } from "../../lib/util/time.js";
import { testRunDir } from "../support/run-dir.js";
import { destroyLeavingNothing } from "../support/sim-leftovers.js";

const profile = TIMING_PROFILES.fast;
const renewMs = (profile.nodeLeaseDurationSeconds * 1000) / 4;
const graceMs = profile.nodeMonitorGracePeriodSeconds * 1000;

describe("sim fidelity: node agents and hostile conditions (fast profile)", function () {
  let cluster: SimCluster | undefined;
  let underTest: SimClusterUnderTest;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;

  const leaseRenewTime = async (node: string): Promise<number> => {
    const lease = await kc
      .makeApiClient(k8s.CoordinationV1Api)
      .readNamespacedLease({ name: node, namespace: "kube-node-lease" });
    return lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
  };
  const readyCondition = async (node: string) =>
    (await readNode(kc, node)).status?.conditions?.find((c) => c.type === "Ready");

  before(async function () {
    cluster = await SimCluster.start({
      name: "it-fidelity",
      root: join(testRunDir("sim-fidelity"), "cluster"),
      workers: 2,
      zones: 1,
      profile,
      progress: consoleProgress(),
    });
    underTest = new SimClusterUnderTest(cluster);
    kc = cluster.kubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
  });

  after(async function () {
    if (!cluster) return;
    // Nothing started here outlives the cluster: the clock webhook and a pause's backstop included.
    const started = await destroyLeavingNothing(cluster, () => underTest.destroy());
    expect(started).to.include("sim-clock-webhook");
  });

  it("runs each node DaemonSet Ready on every worker, the kube-proxy-like one critical and tolerating everything", async function () {
    const pods = (await core.listNamespacedPod({ namespace: "kube-system" })).items;
    for (const name of SIM_DAEMONSETS) {
      const own = pods.filter((p) => p.metadata?.labels?.["app"] === name);
      expect(
        own
          .filter(isPodReady)
          .map((p) => p.spec?.nodeName)
          .sort(),
        name,
      ).to.deep.equal(cluster!.nodeNames());
      expect(
        own.every((p) => p.status?.phase === "Running"),
        name,
      ).to.equal(true);
    }
    const proxy = pods.find((p) => p.metadata?.labels?.["app"] === NODE_PROXY_DAEMONSET);
    expect(proxy?.spec?.priority).to.equal(2_000_001_000);
    expect(isCriticalPod(proxy ?? {})).to.equal(true);
    expect(proxy?.spec?.tolerations?.some((t) => t.operator === "Exists" && t.key === undefined)).to.equal(
      true,
    );
  });

  it("a kubelet clock 15 s behind: its Lease renewTime lags by the offset while the node stays Ready", async function () {
    const node = "worker-1";
    const offsetMs = -15_000;
    const readyBefore = await readyCondition(node);
    expect(readyBefore?.status).to.equal("True");
    await underTest.setClockOffset(node, offsetMs);
    // Slewed: renewTime keeps advancing (1 ms a renewal) until the node's clock is 15 s behind.
    const reachedAt = await pollUntil(
      async () => (Date.now() - (await leaseRenewTime(node)) >= -offsetMs - 500 ? Date.now() : undefined),
      { what: `${node}'s Lease 15 s behind`, timeoutMs: -offsetMs + 4 * renewMs + 10_000, intervalMs: 200 },
    );
    // Longer than the grace period: the node lifecycle controller would have marked a silent node.
    let lastRenewal = await leaseRenewTime(node);
    let renewals = 0;
    while (Date.now() - reachedAt < graceMs + 2 * renewMs) {
      await sleep(500);
      const renewTime = await leaseRenewTime(node);
      if (renewTime > lastRenewal) renewals++;
      lastRenewal = renewTime;
      const lagMs = Date.now() - renewTime;
      expect(lagMs, "lag").to.be.within(-offsetMs - 500, -offsetMs + renewMs + 1_500);
      expect((await readyCondition(node))?.status, "Ready").to.equal("True");
    }
    expect(renewals, "renewals seen").to.be.at.least(3);
    // Ready never left True meanwhile (a flap to Unknown and back moves lastTransitionTime).
    expect((await readyCondition(node))?.lastTransitionTime).to.deep.equal(readyBefore?.lastTransitionTime);
    await underTest.clearClockOffset(node);
    await pollUntil(
      async () => (Date.now() - (await leaseRenewTime(node)) < renewMs + 1_500 ? true : undefined),
      {
        what: `${node}'s Lease true again`,
        timeoutMs: 4 * renewMs + 5_000,
      },
    );
    expect(cluster!.clockSkews()).to.deep.equal({});
  });

  it("a paused kube-apiserver does not answer, and answers again once the pause ends", async function () {
    const pauseMs = 3_000;
    const pause = underTest.pauseApiServer(pauseMs);
    await sleep(300);
    expect(cluster!.status().apiserverPausedUntil).to.be.a("string");
    const during = await withTimeout(core.listNode(), 1_500, "the paused apiserver").then(
      () => "answered",
      (error: unknown) => (error instanceof RekindleError ? error.code : String(error)),
    );
    expect(during).to.equal("TIMEOUT");
    await pause;
    const after = await withTimeout(core.listNode(), 5_000, "the continued apiserver");
    expect(after.items).to.have.length(2);
    expect(cluster!.status().apiserverPausedUntil).to.equal(undefined);
  });

  it("a re-registered node comes back under the same name with a new UID, Ready, its node agents Running", async function () {
    const node = "worker-2";
    const before = (await readNode(kc, node)).metadata?.uid;
    const uid = await underTest.reregisterNode(node);
    expect(uid).to.be.a("string").and.not.equal(before);
    const back = await pollUntil(
      async () => {
        const n = await readNode(kc, node);
        return nodeConditionStatus(n, "Ready") === "True" ? n : undefined;
      },
      { what: `${node} Ready after re-registration`, timeoutMs: 30_000 },
    );
    expect(back.metadata?.uid).to.equal(uid);
    const lease = await kc
      .makeApiClient(k8s.CoordinationV1Api)
      .readNamespacedLease({ name: node, namespace: "kube-node-lease" });
    expect(lease.metadata?.ownerReferences?.map((o) => o.uid)).to.deep.equal([uid]);
    await pollUntil(
      async () => {
        const pods = (
          await core.listNamespacedPod({ namespace: "kube-system", fieldSelector: `spec.nodeName=${node}` })
        ).items.filter((p) => isPodReady(p) && !p.metadata?.deletionTimestamp);
        return SIM_DAEMONSETS.every((name) => pods.some((p) => p.metadata?.labels?.["app"] === name))
          ? true
          : undefined;
      },
      { what: `the node DaemonSets Running on the re-registered ${node}`, timeoutMs: 30_000 },
    );
  });
});
