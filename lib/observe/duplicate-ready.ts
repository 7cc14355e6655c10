// Split brain, as the timeline shows it: one identity of a workload Ready at once on two nodes.
import type { Milestone } from "./milestone.js";
import { readyPodsAtFault } from "./serving.js";
import type { Transition } from "./types.js";
import { isPodOf, podKey, type WorkloadRef } from "./workload-ref.js";

/** Whose pods a split-brain check replays: the workload's id, which pods are its, and its size. */
export interface IdentityScope {
  id: string;
  /** Whether `t` concerns one of its pods. */
  isPod(t: Transition): boolean;
  /** It wants one replica: any two of its pods are then one identity. */
  singleReplica: boolean;
}

/** Two incarnations of one identity Ready at once on different nodes, at or after the fault. */
export interface ReadyOnTwoNodes {
  /** When, on the timeline's clock (not from the fault). */
  atMs: number;
  /** The identity: a StatefulSet pod's name, or the workload's id for one of one replica. */
  identity: string;
  nodes: string[];
  /** The node of the transition that made it two. */
  node?: string;
}

/**
 * Which pods are one identity, that must never be Ready on two nodes at once: a StatefulSet's pods
 * by name (db-0 and its replacement db-0), and any two pods of a workload of one replica. Pods of a
 * larger Deployment each stand alone: several Ready at once on several nodes is their purpose.
 */
function identityOf(t: Transition, scope: IdentityScope): string {
  if (t.detail?.["ownerKind"] === "StatefulSet") return t.subject.name;
  return scope.singleReplica ? scope.id : podKey(t);
}

/**
 * The first time, at or after the fault, one identity of the workload is Ready at once on two
 * nodes: the split brain fencing exists to prevent. A pod counts from Ready until it is gone or
 * ended, even when the API marks it not Ready (at its deletion request, or when its node stops
 * reporting): a pod on a partitioned node may still run and serve. One rule for the timeline's
 * `<id>:duplicate-ready` and the neverReadyOnTwoNodes budget. `seen`: any pod of it at all.
 */
export function firstReadyOnTwoNodes(
  transitions: readonly Transition[],
  faultAtMs: number,
  scope: IdentityScope,
): { seen: boolean; found?: ReadyOnTwoNodes } {
  const ready = new Map<string, { identity: string; node: string }>();
  let seen = false;
  for (const t of [...transitions].sort((a, b) => a.atMs - b.atMs)) {
    if (!scope.isPod(t)) continue;
    seen = true;
    if (t.name === "pod-ready") ready.set(podKey(t), { identity: identityOf(t, scope), node: t.node ?? "" });
    if (t.name === "pod-gone" || t.name === "pod-terminal") ready.delete(podKey(t));
    if (t.atMs < faultAtMs) continue;
    const identity = identityOf(t, scope);
    const nodes = [...new Set([...ready.values()].filter((r) => r.identity === identity).map((r) => r.node))];
    if (nodes.length > 1)
      return { seen, found: { atMs: t.atMs, identity, nodes, ...(t.node ? { node: t.node } : {}) } };
  }
  return { seen };
}

/** "<id>:duplicate-ready" the first time one identity of the workload is Ready on two nodes (firstReadyOnTwoNodes). */
export function duplicateReadyMilestone(
  transitions: readonly Transition[],
  faultAtMs: number,
  workload: WorkloadRef,
): Milestone | undefined {
  const singleReplica = (workload.wantedReady ?? readyPodsAtFault(transitions, faultAtMs, workload)) <= 1;
  const { found } = firstReadyOnTwoNodes(transitions, faultAtMs, {
    id: workload.id,
    isPod: (t) => isPodOf(workload, t),
    singleReplica,
  });
  if (found === undefined) return undefined;
  return {
    name: `${workload.id}:duplicate-ready`,
    atMs: found.atMs - faultAtMs,
    ...(found.node ? { node: found.node } : {}),
  };
}
