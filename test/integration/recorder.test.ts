// The timeline recorder against a real apiserver: live transitions with API timestamps, and a
// watch gap bridged by a relist (the path a 410 Gone takes) without losing a transition.
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { expect } from "chai";
import { join } from "node:path";
import { SimCluster } from "../../lib/cluster/sim/cluster.js";
import { k8s } from "../../lib/kube/client.js";
import { installNodeFenceCrd } from "../../lib/controller/crd.js";
import { TimelineRecorder } from "../../lib/observe/recorder.js";
import type { Transition } from "../../lib/observe/types.js";
import { statsOf } from "../../lib/report/summary.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import { ensureNamespace } from "../../lib/workloads/deploy.js";
import { testRunDir } from "../support/run-dir.js";

const NAMESPACE = "recorder";

function pod(name: string, node: string): k8s.V1Pod {
  return {
    metadata: { name, namespace: NAMESPACE, labels: { app: name } },
    spec: { nodeName: node, containers: [{ name: "c", image: "registry.k8s.io/pause:3.10.1" }] },
  };
}

describe("timeline recorder on a real apiserver", function () {
  let cluster: SimCluster | undefined;
  let recorder: TimelineRecorder | undefined;
  let core: k8s.CoreV1Api;

  before(async function () {
    cluster = await SimCluster.start({
      name: "it-recorder",
      root: join(testRunDir("recorder"), "cluster"),
      workers: 2,
      zones: 1,
      profile: TIMING_PROFILES.fast,
      progress: consoleProgress(),
    });
    const kc = cluster.kubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
    await ensureNamespace(kc, NAMESPACE, cluster.runId);
    // With the NodeFence CRD present, the recorder watches NodeFences too.
    await installNodeFenceCrd(kc);
    recorder = await TimelineRecorder.start(kc, { namespaces: [NAMESPACE] });
  });

  after(async function () {
    await recorder?.stop();
    await cluster?.destroy();
  });

  const find = (predicate: (t: Transition) => boolean) => recorder!.transitions.find(predicate);
  const kc = () => cluster!.kubeConfig();

  it("records a pod's life live, with the API's timestamps", async function () {
    await core.createNamespacedPod({ namespace: NAMESPACE, body: pod("first", "worker-1") });
    const ready = await recorder!.waitFor(
      "pod first Ready",
      (t) => t.name === "pod-ready" && t.subject.name === "first",
      30_000,
    );
    const created = find((t) => t.name === "pod-created" && t.subject.name === "first");
    expect(created?.source).to.equal("watch");
    expect(created?.apiTime).to.be.a("string");
    expect(ready.node).to.equal("worker-1");
    expect(ready.atMs).to.be.at.least(created!.atMs);
  });

  it("measures the watch lag from the Lease's renewTime (microsecond precision) to receipt", async function () {
    await sleep(6_000); // three renewals per node in the fast profile
    const lags = recorder!.transitions
      .filter((t) => t.name === "lease-renewed" && t.source === "watch" && t.apiTime !== undefined)
      .slice(2) // the initial list reports the state at start, not a renewal
      .map((t) => t.atMs - Date.parse(t.apiTime ?? ""));
    expect(lags.length).to.be.at.least(4);
    const stats = statsOf(lags);
    console.log(
      `      lease renewTime → receive lag over ${stats.n} renewals: p50 ${stats.p50} ms, p90 ${stats.p90} ms, max ${stats.max} ms`,
    );
    // Same machine, same clock: the lag is never negative beyond timestamp rounding.
    expect(stats.p50).to.be.within(-5, 1000);
  });

  it("bridges a watch gap by relisting, as after 410 Gone, losing no transition", async function () {
    const resume = recorder!.interrupt("Pod", { expire: true });
    await sleep(500);
    await core.createNamespacedPod({ namespace: NAMESPACE, body: pod("during-gap", "worker-2") });
    await core.deleteNamespacedPod({ namespace: NAMESPACE, name: "first", gracePeriodSeconds: 0 });
    await pollUntil(
      async () => {
        const pods = (await core.listNamespacedPod({ namespace: NAMESPACE })).items;
        return pods.length === 1 && pods[0]?.metadata?.name === "during-gap" ? true : undefined;
      },
      { what: "the gap's changes to settle", timeoutMs: 30_000 },
    );
    expect(find((t) => t.subject.name === "during-gap")).to.equal(undefined);
    resume();
    const gone = await recorder!.waitFor(
      "pod first gone, seen after the gap",
      (t) => t.name === "pod-gone" && t.subject.name === "first",
      30_000,
    );
    const created = await recorder!.waitFor(
      "pod during-gap, seen after the gap",
      (t) => t.name === "pod-created" && t.subject.name === "during-gap",
      30_000,
    );
    expect(gone.source).to.equal("relist");
    expect(created.source).to.equal("relist");
    expect(recorder!.relists["Pod"]).to.be.at.least(1);
    // And the watch is live again afterwards.
    await core.createNamespacedPod({ namespace: NAMESPACE, body: pod("after-gap", "worker-2") });
    const after = await recorder!.waitFor(
      "pod after-gap",
      (t) => t.name === "pod-created" && t.subject.name === "after-gap",
      30_000,
    );
    expect(after.source).to.equal("watch");
  });

  it("records NodeFence step and phase changes", async function () {
    const objects = k8s.KubernetesObjectApi.makeApiClient(cluster!.kubeConfig());
    const fence = {
      apiVersion: "rekindle.dev/v1alpha1",
      kind: "NodeFence",
      metadata: { name: "worker-2" },
      spec: { node: "worker-2" },
    };
    await objects.create(fence);
    // status is a subresource: only the status endpoint changes it.
    await pollUntil(
      async () => {
        try {
          await kc()
            .makeApiClient(k8s.CustomObjectsApi)
            .patchClusterCustomObjectStatus(
              {
                group: "rekindle.dev",
                version: "v1alpha1",
                plural: "nodefences",
                name: "worker-2",
                body: { status: { step: "power-management", phase: "running" } },
              },
              k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
            );
          return true;
        } catch {
          return undefined;
        }
      },
      { what: "NodeFence status patched", timeoutMs: 10_000 },
    );
    const changed = await recorder!.waitFor(
      "NodeFence power-management/running",
      (t) =>
        t.name === "fence-changed" &&
        t.node === "worker-2" &&
        t.detail?.["step"] === "power-management" &&
        t.detail["phase"] === "running",
      10_000,
    );
    expect(changed.subject.kind).to.equal("NodeFence");
  });

  it("records node loss: Ready=Unknown and the unreachable taint, in that order", async function () {
    await cluster!.stopNode("worker-1");
    const faultAt = Date.now();
    const unknown = await recorder!.waitFor(
      "worker-1 Ready=Unknown",
      (t) =>
        t.name === "node-condition" &&
        t.node === "worker-1" &&
        t.detail?.["type"] === "Ready" &&
        t.detail["status"] === "Unknown",
      60_000,
    );
    const taint = await recorder!.waitFor(
      "worker-1 unreachable taint",
      (t) =>
        t.name === "taint-added" &&
        t.node === "worker-1" &&
        t.detail?.["key"] === "node.kubernetes.io/unreachable",
      30_000,
    );
    console.log(
      `      fault → first watch event about the lost node (Ready=Unknown): ${unknown.atMs - faultAt} ms`,
    );
    expect(unknown.atMs).to.be.greaterThan(faultAt);
    expect(taint.atMs).to.be.at.least(unknown.atMs);
    await cluster!.startNode("worker-1");
    await recorder!.waitFor(
      "worker-1 Ready again",
      (t) =>
        t.name === "node-condition" &&
        t.node === "worker-1" &&
        t.detail?.["status"] === "True" &&
        t.atMs > unknown.atMs,
      60_000,
    );
  });
});
