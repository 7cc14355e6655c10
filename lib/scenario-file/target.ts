// Which worker nodes a scenario file's fault hits: the node of a named workload's pod, the workers
// a label selector matches, or N workers of a zone. Never a control-plane node, never none.
import { RekindleError } from "../errors.js";
import { k8s } from "../kube/client.js";
import { isControlPlaneNode, ZONE_LABEL } from "../kube/queries.js";
import type { TargetSpec } from "./types.js";

export interface TargetCluster {
  kc: k8s.KubeConfig;
  /** Worker nodes the provider lets suites disturb. */
  workers: readonly string[];
  namespace: string;
  /** A workload's pod labels, by workload name (for `target.workload`). */
  podLabels(workload: string): Record<string, string> | undefined;
}

function selects(labels: Record<string, string> | undefined, matchLabels: Record<string, string>): boolean {
  return Object.entries(matchLabels).every(([k, v]) => labels?.[k] === v);
}

function describeTarget(target: TargetSpec): string {
  switch (target.kind) {
    case "workload":
      return `the node of workload ${target.workload}'s pod`;
    case "selector":
      return `workers labelled ${Object.entries(target.matchLabels)
        .map(([k, v]) => `${k}=${v}`)
        .join(",")}`;
    case "zone":
      return `${target.count ?? "every"} worker(s) of zone ${target.zone}`;
  }
}

/** The nodes the target names, sorted; refuses an empty set and control-plane nodes. */
export async function resolveTarget(target: TargetSpec, cluster: TargetCluster): Promise<string[]> {
  const nodes = (await cluster.kc.makeApiClient(k8s.CoreV1Api).listNode()).items;
  const byName = new Map(nodes.map((n) => [n.metadata?.name ?? "", n]));
  let chosen: string[];
  switch (target.kind) {
    case "workload": {
      const labels = cluster.podLabels(target.workload);
      if (labels === undefined)
        throw new RekindleError("INTERNAL", `no pod labels known for workload ${target.workload}`);
      const pods = (
        await cluster.kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: cluster.namespace })
      ).items
        .filter((p) => selects(p.metadata?.labels, labels) && p.spec?.nodeName)
        .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
      const node = pods[0]?.spec?.nodeName;
      chosen = node === undefined ? [] : [node];
      break;
    }
    case "selector":
      chosen = nodes
        .filter((n) => selects(n.metadata?.labels, target.matchLabels))
        .map((n) => n.metadata?.name ?? "");
      break;
    case "zone": {
      const inZone = nodes
        .filter(
          (n) =>
            n.metadata?.labels?.[ZONE_LABEL] === target.zone &&
            cluster.workers.includes(n.metadata.name ?? ""),
        )
        .map((n) => n.metadata?.name ?? "")
        .sort();
      if (target.count !== undefined && inZone.length < target.count) {
        throw new RekindleError(
          "PRECONDITION",
          `fault.target: zone ${target.zone} has ${inZone.length} worker(s), the file asks for ${target.count}`,
          {
            hint: `zones here: ${[...new Set(nodes.map((n) => n.metadata?.labels?.[ZONE_LABEL]).filter(Boolean))].join(", ") || "none labelled"}`,
          },
        );
      }
      chosen = inZone.slice(0, target.count ?? inZone.length);
      break;
    }
  }
  const controlPlane = chosen.filter((name) => {
    const node = byName.get(name);
    return (node !== undefined && isControlPlaneNode(node)) || !cluster.workers.includes(name);
  });
  if (controlPlane.length > 0) {
    throw new RekindleError(
      "INVALID_INPUT",
      `fault.target selects ${controlPlane.join(", ")}, which is not a worker rekindle may disturb here (a control-plane node, or on an existing cluster a node --allow-faults did not allow)`,
      { hint: `workers: ${cluster.workers.join(", ")}; narrow the selector to them` },
    );
  }
  if (chosen.length === 0) {
    throw new RekindleError("INVALID_INPUT", `fault.target (${describeTarget(target)}) selects no node`, {
      hint: `workers here: ${cluster.workers
        .map((w) => `${w} (${byName.get(w)?.metadata?.labels?.[ZONE_LABEL] ?? "no zone"})`)
        .join(", ")}`,
    });
  }
  return chosen.sort();
}
