// Split brain, as the timeline shows it: one identity of a workload Ready at once on two nodes.
import type { Milestone } from "./milestone.js";
import { readyPodsAtFault } from "./serving.js";
import type { Transition } from "./types.js";
import { isPodOf, podKey, type WorkloadRef } from "./workload-ref.js";

/**
 * Which pods are one identity, that must never be Ready on two nodes at once: a StatefulSet's pods
 * by name (db-0 and its replacement db-0), and any two pods of a workload of one replica. Pods of a
 * larger Deployment each stand alone: several Ready at once on several nodes is their purpose.
 * (lib/expect/budget-pods.ts judges the neverReadyOnTwoNodes budget by the same rule.)
 */
function identityOf(t: Transition, workload: WorkloadRef, singleReplica: boolean): string {
  if (t.detail?.["ownerKind"] === "StatefulSet") return t.subject.name;
  return singleReplica ? workload.id : podKey(t);
}

/**
 * "<id>:duplicate-ready" the first time, at or after the fault, one identity of the workload is
 * Ready at once on two nodes: the split brain fencing exists to prevent. A pod counts from Ready
 * until it is gone or ended, even when the API marks it not Ready: a pod on a partitioned node may
 * still run and serve while its Ready condition says otherwise.
 */
export function duplicateReadyMilestone(
  transitions: readonly Transition[],
  faultAtMs: number,
  workload: WorkloadRef,
): Milestone | undefined {
  const singleReplica = (workload.wantedReady ?? readyPodsAtFault(transitions, faultAtMs, workload)) <= 1;
  const ready = new Map<string, { identity: string; node: string }>();
  for (const t of transitions) {
    if (!isPodOf(workload, t)) continue;
    if (t.name === "pod-ready")
      ready.set(podKey(t), { identity: identityOf(t, workload, singleReplica), node: t.node ?? "" });
    if (t.name === "pod-gone" || t.name === "pod-terminal") ready.delete(podKey(t));
    if (t.atMs < faultAtMs) continue;
    const identity = identityOf(t, workload, singleReplica);
    const nodes = new Set([...ready.values()].filter((r) => r.identity === identity).map((r) => r.node));
    if (nodes.size > 1) {
      return {
        name: `${workload.id}:duplicate-ready`,
        atMs: t.atMs - faultAtMs,
        ...(t.node ? { node: t.node } : {}),
      };
    }
  }
  return undefined;
}
