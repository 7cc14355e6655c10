import { expect } from "chai";
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { shutdownGroups } from "../../lib/cluster/sim/kubelet/shutdown.js";
import { substitute } from "../../lib/kube/apply.js";
import type { k8s } from "../../lib/kube/client.js";
import { nextEvictionVictim } from "../../lib/kube/eviction-order.js";
import { isCriticalPod, isDaemonSetPod, isMirrorPod, isStaticPod } from "../../lib/kube/pod-kinds.js";
import { deployPath } from "../../lib/util/project-files.js";

/** What the Priority admission plugin writes into spec.priority for the classes the fixtures name. */
const PRIORITY_CLASSES: Readonly<Record<string, number>> = {
  "system-node-critical": 2_000_001_000,
  "system-cluster-critical": 2_000_000_000,
};

/** One pod per workload template of a fixture file, as its controller would create it on a node. */
function podsOf(file: string[], substitutions: Record<string, string>): k8s.V1Pod[] {
  const text = substitute(readFileSync(deployPath(...file), "utf8"), substitutions);
  return parseAllDocuments(text).map((doc) => {
    const workload = doc.toJS() as k8s.V1Deployment | k8s.V1DaemonSet;
    const template = workload.spec?.template;
    const priority = PRIORITY_CLASSES[template?.spec?.priorityClassName ?? ""] ?? 0;
    return {
      metadata: {
        ...template?.metadata,
        name: workload.metadata?.name ?? "",
        namespace: workload.metadata?.namespace ?? "",
        ownerReferences: [
          { apiVersion: "apps/v1", kind: workload.kind ?? "", name: "x", uid: "u", controller: true },
        ],
      },
      spec: { ...template?.spec, containers: template?.spec?.containers ?? [], priority },
      status: { phase: "Running" },
    };
  });
}

const nodeAgents = podsOf(["sim", "daemonsets.yaml"], { KUBELET_VERSION: "v1.34.4" });
const pressurePods = podsOf(["workloads", "pressure.yaml"], { NAMESPACE: "ns", NODE: "n" });

describe("node agent pods as the kubelet treats them", function () {
  it("knows critical pods as the kubelet does: static, mirror, or priority from system-cluster-critical", function () {
    const pod = (annotations: Record<string, string>, priority?: number): k8s.V1Pod => ({
      metadata: { annotations },
      spec: { containers: [], ...(priority === undefined ? {} : { priority }) },
    });
    expect(isCriticalPod(pod({}, 2_000_000_000))).to.equal(true);
    expect(isCriticalPod(pod({}, 1_999_999_999))).to.equal(false);
    expect(isCriticalPod(pod({}))).to.equal(false);
    expect(isMirrorPod(pod({ "kubernetes.io/config.mirror": "abc" }))).to.equal(true);
    expect(isCriticalPod(pod({ "kubernetes.io/config.mirror": "abc" }))).to.equal(true);
    expect(isStaticPod(pod({ "kubernetes.io/config.source": "file" }))).to.equal(true);
    expect(isStaticPod(pod({ "kubernetes.io/config.source": "api" }))).to.equal(false);
  });

  it("the sim's node agents: a critical DaemonSet pod that tolerates everything, and a plain one", function () {
    const [proxy, logAgent] = nodeAgents;
    expect(proxy?.metadata?.name).to.equal("rekindle-node-proxy");
    expect(proxy?.spec?.tolerations).to.deep.equal([{ operator: "Exists" }]);
    expect(isCriticalPod(proxy ?? {})).to.equal(true);
    expect(logAgent?.metadata?.name).to.equal("rekindle-log-agent");
    expect(logAgent?.spec?.tolerations).to.equal(undefined);
    expect(isCriticalPod(logAgent ?? {})).to.equal(false);
    for (const pod of nodeAgents) {
      expect(isDaemonSetPod(pod)).to.equal(true);
      expect(pod.metadata?.namespace).to.equal("kube-system");
    }
    expect(pressurePods.some(isDaemonSetPod)).to.equal(false);
  });

  it("evicts the pressure suites' pods first, then the plain node agent, never the critical one", function () {
    for (const resource of ["memory", "ephemeral-storage"] as const) {
      let pods = [...nodeAgents, ...pressurePods];
      const evicted: string[] = [];
      for (;;) {
        const next = nextEvictionVictim(pods, resource);
        if (!next) break;
        evicted.push(next.name);
        pods = pods.map((p) => (p.metadata?.name === next.name ? { ...p, status: { phase: "Failed" } } : p));
      }
      expect(evicted, resource).to.deep.equal([
        "pressure-besteffort",
        "pressure-burstable",
        "pressure-guaranteed",
        "rekindle-log-agent",
      ]);
    }
  });

  it("passes over pods being deleted, as the eviction manager's active pods do", function () {
    const deleting = pressurePods.map((p) => ({
      ...p,
      metadata: { ...p.metadata, deletionTimestamp: new Date() },
    }));
    expect(nextEvictionVictim([...nodeAgents, ...deleting], "memory")?.name).to.equal("rekindle-log-agent");
  });

  it("shuts down regular pods (DaemonSet ones included) first and critical ones last, ended pods never", function () {
    const ended: k8s.V1Pod = { ...pressurePods[0], status: { phase: "Succeeded" } };
    const [regular, critical] = shutdownGroups([...nodeAgents, ...pressurePods.slice(1), ended]);
    expect(regular.map((p) => p.metadata?.name)).to.deep.equal([
      "rekindle-log-agent",
      "pressure-burstable",
      "pressure-guaranteed",
    ]);
    expect(critical.map((p) => p.metadata?.name)).to.deep.equal(["rekindle-node-proxy"]);
  });
});
