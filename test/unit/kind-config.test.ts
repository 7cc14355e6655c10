import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { SHARED_NODE_DIR } from "../../lib/cluster/kind/shared-storage.js";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

interface KindNode {
  role: string;
  extraMounts?: { hostPath: string; containerPath: string }[];
  labels?: Record<string, string>;
  kubeadmConfigPatches?: string[];
}

describe("kind-config.yaml", function () {
  const config = parse(readFileSync(join(PROJECT_ROOT, "kind-config.yaml"), "utf8")) as {
    kind: string;
    nodes: KindNode[];
    kubeadmConfigPatches?: string[];
  };

  it("has 1 control plane and 3 workers spread over 2 zones", function () {
    expect(config.kind).to.equal("Cluster");
    expect(config.nodes.map((n) => n.role)).to.deep.equal(["control-plane", "worker", "worker", "worker"]);
    const zones = config.nodes
      .filter((n) => n.role === "worker")
      .map((n) => n.labels?.["topology.kubernetes.io/zone"]);
    expect(new Set(zones)).to.deep.equal(new Set(["zone-a", "zone-b"]));
  });

  it("mounts one host directory into every worker for the shared StorageClass", function () {
    const mounts = config.nodes
      .filter((n) => n.role === "worker")
      .map((n) => n.extraMounts?.find((m) => m.containerPath === SHARED_NODE_DIR)?.hostPath);
    expect(mounts).to.have.length(3);
    expect(new Set(mounts).size).to.equal(1);
    expect(mounts[0]).to.be.a("string").and.match(/^\//);
  });

  it("sets the default profile's knobs cluster-wide, where kubeadm hands them to every kubelet", function () {
    const p = TIMING_PROFILES.default;
    const patches = config.kubeadmConfigPatches ?? [];
    const clusterConfiguration = patches.find((t) => t.includes("kind: ClusterConfiguration")) ?? "";
    expect(clusterConfiguration).to.include(
      `node-monitor-grace-period: "${p.nodeMonitorGracePeriodSeconds}s"`,
    );
    expect(clusterConfiguration).to.include(
      `default-unreachable-toleration-seconds: "${p.defaultUnreachableTolerationSeconds}"`,
    );
    const kubelet = parse(patches.find((t) => t.includes("kind: KubeletConfiguration")) ?? "") as {
      nodeLeaseDurationSeconds: number;
      evictionHard: Record<string, string>;
      failCgroupV1: boolean;
      imageMinimumGCAge: string;
    };
    expect(kubelet.nodeLeaseDurationSeconds).to.equal(p.nodeLeaseDurationSeconds);
    expect(kubelet.evictionHard).to.have.keys(
      "memory.available",
      "nodefs.available",
      "nodefs.inodesFree",
      "imagefs.available",
    );
    expect(kubelet.failCgroupV1).to.equal(false);
    // Offline: no image younger than a day (since the kubelet first saw it) is garbage-collected.
    expect(kubelet.imageMinimumGCAge).to.equal("24h");
    // A node-level KubeletConfiguration patch would never reach a joining worker's kubelet.
    for (const node of config.nodes) {
      expect((node.kubeadmConfigPatches ?? []).join("\n")).not.to.include("KubeletConfiguration");
    }
  });
});
