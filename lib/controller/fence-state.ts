// NodeFence status and the pure decision of what to do next. The controller persists every step
// in the NodeFence, so a restarted controller resumes where the last one stopped.
import type { FenceCondition } from "./fence-conditions.js";

export const NODE_FENCE_GROUP = "rekindle.dev";
export const NODE_FENCE_VERSION = "v1alpha1";
export const NODE_FENCE_PLURAL = "nodefences";

/**
 * The steps a fence goes through, in order (the CRD's status.step enum lists the same).
 * The fencing proposal also has an "isolation" step: cutting the node from its storage or network
 * (a Fibre Channel port off, say) as methods of their own. No rekindle driver isolates: every one
 * powers the node off, so no fence could ever be in that step, and the fencing taint (NoSchedule)
 * only keeps new pods away while the node's running pods can still write their volumes. A step
 * named isolation would claim a safety the controller does not give; add it with a driver that does.
 */
export const FENCE_STEPS = ["power-management", "taint", "cleanup", "recovery"] as const;
export type FenceStep = (typeof FENCE_STEPS)[number];
export type FencePhase = "new" | "running" | "done" | "error";

export interface FenceStatus {
  step: FenceStep;
  phase: FencePhase;
  retries: number;
  message?: string;
  /** When recent fences of this node started (newest last): the per-node rate limit counts them. */
  fenceStarts?: string[];
  detectedAt?: string;
  fencedAt?: string;
  taintedAt?: string;
  cleanedAt?: string;
  recoveredAt?: string;
  lastTransitionTime?: string;
  /** Derived from the rest on every write (fence-conditions.ts): Processing, FenceSucceeded, WorkloadsReleased. */
  conditions?: FenceCondition[];
  /** The metadata.generation the status was last written for. */
  observedGeneration?: number;
}

export interface NodeFence {
  apiVersion: string;
  kind: "NodeFence";
  metadata: {
    name: string;
    resourceVersion?: string;
    /** Bumped by the API server on every spec change (a restarted fence). */
    generation?: number;
    labels?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
  };
  /** `nodeUID`: the Node object this fence belongs to (a node re-registered under the name is another). */
  spec: { node: string; nodeUID?: string; reason?: string; driver?: string };
  status?: FenceStatus;
}

/** Keeps a NodeFence until the controller has lifted the taints it put on the node. */
export const NODE_FENCE_FINALIZER = "rekindle.dev/lift-taints";

/** Does `fence` belong to this Node object? A fence written before UIDs were recorded adopts it. */
export function fenceOwnsNode(fence: NodeFence, node: { metadata?: { uid?: string } }): boolean {
  return fence.spec.nodeUID === undefined || fence.spec.nodeUID === node.metadata?.uid;
}

export type FenceAction =
  | "power-off"
  | "confirm-off"
  | "retry"
  | "abort"
  | "abandon"
  | "taint"
  | "cleanup"
  | "begin-recovery"
  | "finish-recovery"
  | "wait";

export interface FenceObservation {
  /** The node as this pass judges it (detect.ts): only "unhealthy" is lost, only "healthy" is back. */
  health: "healthy" | "suspect" | "unobserved" | "unhealthy";
  /** How long the node has been healthy without a break, on this controller's clock (0: not healthy). */
  healthyForMs: number;
  /** Pods still bound to the node with a deletionTimestamp (a returned node must drop them first). */
  stalePods: number;
  nowMs: number;
}

export interface DecideOptions {
  fenceRetries: number;
  retryBackoffMs: number;
  /** A returned node must stay healthy this long before its taints are lifted (damps flapping). */
  healthyBeforeUnfenceMs: number;
  /** A returned node healthy this long is let go even if stale pods remain (finalizers, say). */
  staleWaitMs: number;
}

/** The fence starts of `status` within `windowMs` before `nowMs` (the per-node rate limit counts them). */
export function recentFenceStarts(
  status: FenceStatus | undefined,
  nowMs: number,
  windowMs: number,
): string[] {
  return (status?.fenceStarts ?? []).filter((t) => nowMs - Date.parse(t) < windowMs);
}

/** True once the fence has run its course (and a new loss starts a new fence). */
export function isFinished(status: FenceStatus | undefined): boolean {
  return status?.step === "recovery" && status.phase === "done";
}

/**
 * What to do next for one NodeFence. Safety rules:
 * - a side effect on a node (power off, taint, cleanup) needs the node lost *now* ("unhealthy");
 *   with no evidence either way ("unobserved": right after a restart or blindness) it waits;
 * - the out-of-service taint is only ever added after a confirmed fence (power-management done);
 * - a node healthy again before that is let go (abort); a node seen renewing again after it (someone
 *   powered it on) is neither tainted nor cleaned further (abandon: straight to recovery). The
 *   taint and cleanup actions also re-read the power state right before they act.
 */
export function decide(
  status: FenceStatus,
  observation: FenceObservation,
  options: DecideOptions,
): FenceAction {
  const { step, phase } = status;
  if (step === "power-management") return decidePowerManagement(status, observation, options);
  if (step === "taint" || (step === "cleanup" && phase !== "done"))
    return decideTaintOrCleanup(status, observation);
  if (step === "cleanup") return "begin-recovery";
  return decideRecovery(status, observation, options);
}

/** Power-management: power off a lost node, confirm it off, retry after an error; abort if healthy. */
function decidePowerManagement(
  status: FenceStatus,
  observation: FenceObservation,
  options: DecideOptions,
): FenceAction {
  const { phase } = status;
  const { health } = observation;
  const lost = health === "unhealthy";
  const alive = health === "healthy" || health === "suspect";
  if (phase === "done") return lost ? "taint" : alive ? "abandon" : "wait";
  if (health === "healthy") return "abort";
  if (phase === "running") return "confirm-off";
  if (!lost) return "wait";
  if (phase === "new") return "power-off";
  // error: retry after a backoff, as long as retries remain
  const since = status.lastTransitionTime ? Date.parse(status.lastTransitionTime) : 0;
  if (status.retries >= options.fenceRetries) return "wait";
  return observation.nowMs - since >= options.retryBackoffMs ? "retry" : "wait";
}

/** Taint, then cleanup, while the node is still lost; abandoned if it is seen alive again. */
function decideTaintOrCleanup(status: FenceStatus, observation: FenceObservation): FenceAction {
  const { step, phase } = status;
  const { health } = observation;
  const alive = health === "healthy" || health === "suspect";
  if (health !== "unhealthy") return alive ? "abandon" : "wait";
  return step === "taint" && phase !== "done" ? "taint" : "cleanup";
}

/** Recovery: lift the taints once the node has been healthy long enough and its stale pods are gone. */
function decideRecovery(
  status: FenceStatus,
  observation: FenceObservation,
  options: DecideOptions,
): FenceAction {
  const { health } = observation;
  if (status.phase === "done") return "wait";
  if (health !== "healthy" || observation.healthyForMs < options.healthyBeforeUnfenceMs) return "wait";
  return observation.stalePods === 0 || observation.healthyForMs >= options.staleWaitMs
    ? "finish-recovery"
    : "wait";
}
