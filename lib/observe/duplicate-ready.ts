// Split brain, as the timeline shows it: two pods of one workload Ready at once on different nodes.
import type { Milestone } from "./milestone.js";
import type { Transition } from "./types.js";
import { isPodOf, podKey, type WorkloadRef } from "./workload-ref.js";

/**
 * "<id>:duplicate-ready" the first time, at or after the fault, two pods of the workload are Ready
 * at once on different nodes: the split brain fencing exists to prevent. A pod counts from Ready
 * until it is gone or ended, even when the API marks it not Ready: a pod on a partitioned node may
 * still run and serve while its Ready condition says otherwise.
 */
export function duplicateReadyMilestone(
  transitions: readonly Transition[],
  faultAtMs: number,
  workload: WorkloadRef,
): Milestone | undefined {
  const ready = new Map<string, string>();
  for (const t of transitions) {
    if (!isPodOf(workload, t)) continue;
    if (t.name === "pod-ready") ready.set(podKey(t), t.node ?? "");
    if (t.name === "pod-gone" || t.name === "pod-terminal") ready.delete(podKey(t));
    if (new Set(ready.values()).size > 1 && t.atMs >= faultAtMs) {
      return {
        name: `${workload.id}:duplicate-ready`,
        atMs: t.atMs - faultAtMs,
        ...(t.node ? { node: t.node } : {}),
      };
    }
  }
  return undefined;
}
