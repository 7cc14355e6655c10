// The recorder and the per-workload milestones against a real control plane: the sim's KWOK pods
// get IPs and turn Ready, kube-controller-manager's EndpointSlice controller fills the Service's
// slices, a lost node's endpoint going not ready, then a replacement's, are on the timeline; and a
// pod's claim leads to its PersistentVolume and that volume's VolumeAttachment.
import { expect } from "chai";
import { join } from "node:path";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { SimCluster } from "../../lib/cluster/sim/cluster.js";
import { k8s } from "../../lib/kube/client.js";
import { deriveNodeLossMilestones, type WorkloadRef } from "../../lib/observe/milestones.js";
import { TimelineRecorder } from "../../lib/observe/recorder.js";
import type { Transition } from "../../lib/observe/types.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { ensureNamespace } from "../../lib/workloads/deploy.js";
import { testRunDir } from "../support/run-dir.js";

const NAMESPACE = "endpoints";
const SERVICE = "api";

function apiPod(name: string, node: string, app = SERVICE, volumes?: k8s.V1Volume[]): k8s.V1Pod {
  return {
    metadata: { name, namespace: NAMESPACE, labels: { app } },
    spec: {
      nodeName: node,
      containers: [{ name: "c", image: "registry.k8s.io/pause:3.10.1" }],
      ...(volumes ? { volumes } : {}),
    },
  };
}

describe("EndpointSlices on the timeline, on the sim", function () {
  let cluster: SimCluster | undefined;
  let recorder: TimelineRecorder | undefined;
  let core: k8s.CoreV1Api;

  before(async function () {
    cluster = await SimCluster.start({
      name: "it-endpoints",
      root: join(testRunDir("recorder-endpoints"), "cluster"),
      workers: 2,
      zones: 1,
      profile: TIMING_PROFILES.fast,
      progress: consoleProgress(),
    });
    const kc = cluster.kubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
    await ensureNamespace(kc, NAMESPACE, cluster.runId);
    recorder = await TimelineRecorder.start(kc, { namespaces: [NAMESPACE] });
    await core.createNamespacedService({
      namespace: NAMESPACE,
      body: {
        metadata: { name: SERVICE, namespace: NAMESPACE },
        spec: { selector: { app: SERVICE }, ports: [{ port: 80, targetPort: 80 }] },
      },
    });
    await core.createNamespacedPod({ namespace: NAMESPACE, body: apiPod("api-1", "worker-1") });
    await core.createNamespacedPod({ namespace: NAMESPACE, body: apiPod("api-2", "worker-2") });
  });

  after(async function () {
    await recorder?.stop();
    await cluster?.destroy();
  });

  const sliceOfService =
    (ready: number, afterMs = 0) =>
    (t: Transition) =>
      t.name === "endpoints-changed" &&
      t.atMs >= afterMs &&
      t.detail?.["service"] === SERVICE &&
      t.detail["ready"] === String(ready);

  it("records the slices filling: KWOK pods get IPs, turn Ready, and the controller lists them", async function () {
    await recorder!.waitFor("the Service's slices holding 2 ready endpoints", sliceOfService(2), 60_000);
    const slices = await cluster!
      .kubeConfig()
      .makeApiClient(k8s.DiscoveryV1Api)
      .listNamespacedEndpointSlice({
        namespace: NAMESPACE,
        labelSelector: `kubernetes.io/service-name=${SERVICE}`,
      });
    const endpoints = slices.items.flatMap((s) => s.endpoints);
    const pods = (await core.listNamespacedPod({ namespace: NAMESPACE })).items;
    expect(endpoints.map((e) => e.targetRef?.uid).sort()).to.deep.equal(
      pods.map((p) => p.metadata?.uid).sort(),
    );
    for (const endpoint of endpoints) {
      expect(endpoint.addresses[0], "an endpoint's address").to.match(/^10\.244\.\d+\.\d+$/);
      expect(endpoint.conditions?.ready, "an endpoint's ready condition").to.equal(true);
    }
  });

  it("derives endpoints-lost when a node is lost and serving once a replacement is Ready", async function () {
    const faultAtMs = Date.now();
    await cluster!.stopNode("worker-1");
    // The node lifecycle controller marks the lost node's pods not Ready; the slice follows.
    const lost = await recorder!.waitFor("one ready endpoint left", sliceOfService(1, faultAtMs), 90_000);
    await core.createNamespacedPod({ namespace: NAMESPACE, body: apiPod("api-3", "worker-2") });
    const back = await recorder!.waitFor("two ready endpoints again", sliceOfService(2, lost.atMs), 60_000);
    const api: WorkloadRef = {
      id: "api",
      namespace: NAMESPACE,
      matchLabels: { app: SERVICE },
      service: SERVICE,
    };
    const milestones = deriveNodeLossMilestones(recorder!.transitions, {
      faultAtMs,
      lostNode: "worker-1",
      workloads: [api],
    });
    const at = (name: string) => milestones.find((m) => m.name === name)?.atMs;
    console.log(
      `      api:endpoints-lost at ${at("api:endpoints-lost")} ms, api:serving at ${at("api:serving")} ms`,
    );
    expect(at("api:endpoints-lost")).to.equal(lost.atMs - faultAtMs);
    expect(at("api:serving")).to.equal(back.atMs - faultAtMs);
    expect(
      recorder!.transitions.some((t) => t.name === "pod-unready" && t.subject.name === "api-1"),
      "api-1 recorded no longer Ready",
    ).to.equal(true);
  });

  it("leads from a pod's claim to its bound volume and that volume's attachment", async function () {
    await core.createNamespacedPersistentVolumeClaim({
      namespace: NAMESPACE,
      body: {
        metadata: { name: "data", namespace: NAMESPACE },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
      },
    });
    const volumes = [{ name: "data", persistentVolumeClaim: { claimName: "data" } }];
    await core.createNamespacedPod({ namespace: NAMESPACE, body: apiPod("db-0", "worker-2", "db", volumes) });
    const bound = await recorder!.waitFor(
      "claim data bound",
      (t) => t.name === "pvc-bound" && t.detail?.["claim"] === "data",
      60_000,
    );
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, name: "data" });
    expect(bound.detail?.["volume"]).to.equal(claim.spec?.volumeName);
    const created = recorder!.transitions.find((t) => t.name === "pod-created" && t.subject.name === "db-0");
    expect(created?.pod?.claims).to.deep.equal(["data"]);
    await recorder!.waitFor(
      "the claim's volume attached to worker-2",
      (t) =>
        t.name === "va-attached" && t.node === "worker-2" && t.detail?.["volume"] === claim.spec?.volumeName,
      60_000,
    );
  });
});
