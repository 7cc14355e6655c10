// NodeFence status and the pure decision of what to do next. The controller persists every step
// in the NodeFence, so a restarted controller resumes where the last one stopped.

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
  detectedAt?: string;
  fencedAt?: string;
  taintedAt?: string;
  cleanedAt?: string;
  recoveredAt?: string;
  lastTransitionTime?: string;
}

export interface NodeFence {
  apiVersion: string;
  kind: "NodeFence";
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> };
  spec: { node: string; reason?: string; driver?: string };
  status?: FenceStatus;
}

export type FenceAction =
  | "power-off"
  | "confirm-off"
  | "retry"
  | "abort"
  | "taint"
  | "cleanup"
  | "begin-recovery"
  | "finish-recovery"
  | "wait";

export interface FenceObservation {
  /** The node's Lease is fresh and Ready is True. */
  nodeHealthy: boolean;
  /** Pods still bound to the node with a deletionTimestamp (a returned node must drop them first). */
  stalePods: number;
  nowMs: number;
}

export interface DecideOptions {
  fenceRetries: number;
  retryBackoffMs: number;
}

/** True once the fence has run its course (and a new loss starts a new fence). */
export function isFinished(status: FenceStatus | undefined): boolean {
  return status?.step === "recovery" && status.phase === "done";
}

/**
 * What to do next for one NodeFence. Safety rule: the out-of-service taint is only ever added after
 * a confirmed fence (power-management done); a node that is healthy again before that is let go.
 */
export function decide(
  status: FenceStatus,
  observation: FenceObservation,
  options: DecideOptions,
): FenceAction {
  const { step, phase } = status;
  if (step === "power-management") {
    if (phase === "done") return "taint";
    if (observation.nodeHealthy) return "abort";
    if (phase === "new") return "power-off";
    if (phase === "running") return "confirm-off";
    // error: retry after a backoff, as long as retries remain
    const since = status.lastTransitionTime ? Date.parse(status.lastTransitionTime) : 0;
    if (status.retries >= options.fenceRetries) return "wait";
    return observation.nowMs - since >= options.retryBackoffMs ? "retry" : "wait";
  }
  if (step === "taint") return phase === "done" ? "cleanup" : "taint";
  if (step === "cleanup") return phase === "done" ? "begin-recovery" : "cleanup";
  // recovery
  if (phase === "done") return "wait";
  return observation.nodeHealthy && observation.stalePods === 0 ? "finish-recovery" : "wait";
}
