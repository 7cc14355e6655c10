// Knobs read, not guessed, on an existing cluster: the kubelet's configz through nodes/proxy, the
// node's Lease, its conditions; the rest assumed from the profile, each value saying which. Against
// a fake API server serving what a real one serves for these paths.
import { expect } from "chai";
import { ExistingCluster } from "../../lib/cluster/existing/cluster.js";
import { goDurationMs } from "../../lib/cluster/existing/knobs.js";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { list, startFakeApiServer, status, type FakeApiServer } from "../support/fake-apiserver.js";

const WORKER = {
  metadata: { name: "worker-1", labels: {} },
  status: {
    conditions: [
      { type: "Ready", status: "True" },
      { type: "MemoryPressure", status: "False" },
    ],
  },
};
const CONTROL_PLANE = { metadata: { name: "cp", labels: { "node-role.kubernetes.io/control-plane": "" } } };

/** What a kubelet's /configz answers (trimmed to the fields read). */
const CONFIGZ = {
  kubeletconfig: {
    shutdownGracePeriod: "30s",
    evictionPressureTransitionPeriod: "1m30s",
    nodeStatusUpdateFrequency: "10s",
    nodeLeaseDurationSeconds: 40,
    evictionHard: { "memory.available": "100Mi", "nodefs.available": "10%" },
  },
};

function routes(configz: () => { status?: number; body: unknown }) {
  return {
    "GET /api/v1/nodes": () => list("NodeList", [CONTROL_PLANE, WORKER]),
    "GET /api/v1/nodes/worker-1": () => ({ body: { kind: "Node", apiVersion: "v1", ...WORKER } }),
    "GET /api/v1/nodes/worker-1/proxy/configz": configz,
    "GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/worker-1": () => ({
      body: {
        kind: "Lease",
        apiVersion: "coordination.k8s.io/v1",
        metadata: { name: "worker-1" },
        spec: { leaseDurationSeconds: 20 },
      },
    }),
  };
}

describe("existing cluster: knobs read, not guessed", () => {
  let api: FakeApiServer | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it("reads Go durations as configz writes them", () => {
    expect(goDurationMs("1m30s")).to.equal(90_000);
    expect(goDurationMs("5m0s")).to.equal(300_000);
    expect(goDurationMs("300ms")).to.equal(300);
    expect(goDurationMs("0s")).to.equal(0);
    expect(goDurationMs("soon")).to.equal(undefined);
  });

  it("takes the kubelet's settings from configz and the lease from the node's Lease; the rest is assumed from the profile", async () => {
    api = await startFakeApiServer(routes(() => ({ body: CONFIGZ })));
    const cluster = await ExistingCluster.open({
      kubeconfig: api.kubeconfigPath,
      profile: TIMING_PROFILES.fast,
    });
    expect(cluster.eviction).to.deep.equal({
      pressureTransitionPeriodMs: 90_000,
      monitoringIntervalMs: 10_000,
      statusUpdateIntervalMs: 10_000,
      shutdownGracePeriodMs: 30_000,
    });
    // The Lease object wins over the kubelet's configured value (it is what the node lives by).
    expect(cluster.profile.nodeLeaseDurationSeconds).to.equal(20);
    expect(cluster.profile.nodeMonitorGracePeriodSeconds).to.equal(
      TIMING_PROFILES.fast.nodeMonitorGracePeriodSeconds,
    );
    const by = new Map(cluster.knobSources.map((k) => [k.name, k]));
    expect(by.get("kubelet.shutdownGracePeriod")).to.deep.equal({
      name: "kubelet.shutdownGracePeriod",
      value: "30000 ms",
      source: "read",
      from: "/api/v1/nodes/worker-1/proxy/configz",
    });
    expect(by.get("kubelet.evictionHard")?.value).to.equal("memory.available<100Mi, nodefs.available<10%");
    expect(by.get("nodeLeaseDurationSeconds")).to.include({
      value: "20",
      source: "read",
      from: "Lease kube-node-lease/worker-1",
    });
    expect(by.get("node worker-1 conditions")).to.include({
      value: "Ready=True, MemoryPressure=False",
      source: "read",
    });
    expect(by.get("nodeMonitorGracePeriodSeconds")).to.include({ value: "10", source: "assumed" });
    expect(by.get("nodeMonitorGracePeriodSeconds")?.from).to.include("profile fast");
    expect(by.get("podStartMs")).to.include({ source: "assumed" });
    expect(api.requests).to.include("GET /api/v1/nodes/worker-1/proxy/configz");
  });

  it("assumes upstream's kubelet defaults where configz is refused, saying why and what reading needs", async () => {
    api = await startFakeApiServer(
      routes(() =>
        status(403, "Forbidden", 'nodes "worker-1" is forbidden: cannot get resource "nodes/proxy"'),
      ),
    );
    const cluster = await ExistingCluster.open({ kubeconfig: api.kubeconfigPath });
    expect(cluster.eviction.shutdownGracePeriodMs).to.equal(0);
    expect(cluster.eviction.pressureTransitionPeriodMs).to.equal(300_000);
    const grace = cluster.knobSources.find((k) => k.name === "kubelet.shutdownGracePeriod");
    expect(grace?.source).to.equal("assumed");
    expect(grace?.from).to.include("reading it needs get on nodes/proxy");
    // The Lease still reads.
    expect(cluster.profile.nodeLeaseDurationSeconds).to.equal(20);
  });
});
