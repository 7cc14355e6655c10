import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import {
  csiUniqueVolumeName,
  volumeLookup,
  volumesInUseOnNode,
} from "../../lib/cluster/sim/kubelet/volumes-in-use.js";

const DRIVER = "sim.csi.rekindle.dev";

function pod(name: string, node: string, claim: string | undefined, phase = "Running"): k8s.V1Pod {
  return {
    metadata: { name, namespace: "ns" },
    spec: {
      nodeName: node,
      containers: [],
      volumes: claim ? [{ name: "data", persistentVolumeClaim: { claimName: claim } }] : [],
    },
    status: { phase },
  };
}

const claims: k8s.V1PersistentVolumeClaim[] = [
  { metadata: { name: "data-db-0", namespace: "ns" }, spec: { volumeName: "pv-a" } },
  { metadata: { name: "data-db-1", namespace: "ns" }, spec: { volumeName: "pv-b" } },
  { metadata: { name: "pending", namespace: "ns" }, spec: {} },
];
const volumes: k8s.V1PersistentVolume[] = [
  { metadata: { name: "pv-a" }, spec: { csi: { driver: DRIVER, volumeHandle: "sim-a" } } },
  { metadata: { name: "pv-b" }, spec: { csi: { driver: DRIVER, volumeHandle: "sim-b" } } },
];

describe("sim kubelet: node.status.volumesInUse", function () {
  it("names a CSI volume as the attach-detach controller does", function () {
    expect(csiUniqueVolumeName(DRIVER, "sim-a")).to.equal("kubernetes.io/csi/sim.csi.rekindle.dev^sim-a");
  });

  it("reports the volumes of the node's pods that have not ended, sorted, once each", function () {
    const pods = [
      pod("db-1", "worker-1", "data-db-1"),
      pod("db-0", "worker-1", "data-db-0"),
      pod("db-0-again", "worker-1", "data-db-0", "Pending"),
      pod("web", "worker-1", undefined),
      pod("elsewhere", "worker-2", "data-db-1"),
      pod("evicted", "worker-1", "data-db-1", "Failed"),
      pod("unbound", "worker-1", "pending"),
    ];
    expect(volumesInUseOnNode("worker-1", pods, volumeLookup(claims, volumes))).to.deep.equal([
      csiUniqueVolumeName(DRIVER, "sim-a"),
      csiUniqueVolumeName(DRIVER, "sim-b"),
    ]);
  });

  it("reports nothing once the node's pods have ended (what an orderly shutdown leaves)", function () {
    const pods = [
      pod("db-0", "worker-1", "data-db-0", "Failed"),
      pod("db-1", "worker-1", "data-db-1", "Succeeded"),
    ];
    expect(volumesInUseOnNode("worker-1", pods, volumeLookup(claims, volumes))).to.deep.equal([]);
  });
});
