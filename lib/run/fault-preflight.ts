// The preflight of a run allowed to fault a cluster rekindle did not create: before any scenario,
// it says exactly which faults will be done, to which nodes, and until when at the latest.
import type { ClusterUnderTest, NodeCapability } from "../cluster/provider.js";
import { FAULT_DEADLINES } from "../fault/types.js";
import { JOURNAL_NAMESPACE } from "../fault/record-codec.js";
import { skipReason, type ScenarioGroup } from "./suite.js";

/** The node-fault capabilities and what each does to a node. */
const NODE_FAULT_WORDS: Partial<Record<NodeCapability, string>> = {
  lifecycle: "node loss (kubelet and container runtime stopped, every pod's processes killed; then started)",
  partition: "partition (the node's traffic to the API server dropped, then restored)",
  pressure: "memory or disk fill past the kubelet's eviction threshold, then removed",
  "graceful-shutdown": "graceful shutdown (the kubelet sees it coming)",
};

function minutes(ms: number): string {
  return `${Math.round(ms / 60_000)} min`;
}

/**
 * The preflight lines: the nodes and how they were chosen, the faults each scenario that will run
 * does, and the deadline rule with the latest instant a fault of a scenario starting now may last.
 * Empty when the cluster has no rails (rekindle's own clusters need none).
 */
export function faultPreflightLines(
  cluster: ClusterUnderTest,
  groups: readonly ScenarioGroup[],
  options: { grep?: string; now?: number } = {},
): string[] {
  const rails = cluster.faultRails;
  if (rails === undefined) return [];
  const pattern = options.grep !== undefined ? new RegExp(options.grep) : undefined;
  const now = options.now ?? Date.now();
  const lines = [
    `preflight: node faults allowed on ${cluster.description}`,
    `  nodes:     ${rails.allowedNodes.join(", ")} (chosen by ${rails.chosenBy}); at most ${rails.maxNodes} at once; never a control-plane node; no other node is touched`,
  ];
  const faulting: string[] = [];
  const skipped: string[] = [];
  for (const group of groups) {
    for (const { definition } of group.scenarios) {
      if (pattern !== undefined && !pattern.test(`${definition.id} — ${definition.title}`)) continue;
      const faults = definition.requires.flatMap((c) => NODE_FAULT_WORDS[c] ?? []);
      if (faults.length === 0) continue;
      if (skipReason(cluster, definition) !== undefined) skipped.push(definition.id);
      else faulting.push(`    ${definition.id}: ${faults.join("; ")}`);
    }
  }
  lines.push(
    faulting.length > 0
      ? "  what:      these scenarios fault those nodes:"
      : "  what:      no scenario of this run faults a node",
    ...faulting,
  );
  if (skipped.length > 0) lines.push(`  skipped:   ${skipped.join(", ")} (each says why)`);
  const storage = cluster.storage;
  if (storage !== undefined)
    lines.push(
      `  storage:   the StatefulSet's volume from StorageClass ${storage.storageClass} (${storage.attachRequired ? "attached to a node: detached from the lost one first" : "nothing to attach"})`,
    );
  else if (cluster.volumesStayPut !== undefined)
    lines.push(`  storage:   scenarios with a volume are skipped: ${cluster.volumesStayPut}`);
  const otherwise = rails.deadlineMs ?? FAULT_DEADLINES.defaultMs;
  const latest = new Date(now + Math.max(otherwise, FAULT_DEADLINES.maxMs)).toISOString();
  lines.push(
    `  until:     each fault is reverted by its deadline at the latest: its duration + ${minutes(FAULT_DEADLINES.marginMs)}, else ${minutes(otherwise)} after it is applied (a fault started now: by ${latest} at the latest); the node agent reverts it then even if rekindle is gone`,
    `  journal:   every fault is recorded in namespace ${JOURNAL_NAMESPACE} before it acts; \`rekindle reap\` reverts what a dead run left`,
  );
  return lines;
}
