// NodeFence status and the pure decision of what to do next. The controller persists every step
// in the NodeFence, so a restarted controller resumes where the last one stopped.
import type { FenceCondition } from "./fence-condition-types.js";

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
  /** Set when the controller will never act on this NodeFence, saying why (a name other than its node's). */
  refused?: string;
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

/**
 * On a Node whose fence a person cancelled (deleted its NodeFence while under way): when. The node
 * is not fenced again while it carries this; the controller removes it once the node is healthy.
 * Kept on the Node object, not in memory, so a restarted controller honours the cancellation too.
 */
export const CANCELLED_ANNOTATION = "rekindle.dev/fence-cancelled";

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
  | "reevaluate"
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
  maxRetryBackoffMs: number;
  /** A fence in recovery this long is re-evaluated (see `decideRecovery`). */
  recoveryTimeoutMs: number;
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

/**
 * How long a fence in error waits before its next attempt, after `retries` failures: the base
 * backoff for the first `fenceRetries`, then twice as long for each failure more, at most
 * `maxRetryBackoffMs`. There is no last attempt: a BMC that comes back is used.
 */
export function retryBackoffMs(
  retries: number,
  options: Pick<DecideOptions, "fenceRetries" | "retryBackoffMs" | "maxRetryBackoffMs">,
): number {
  const beyond = Math.max(0, retries - options.fenceRetries);
  const backoff = options.retryBackoffMs * 2 ** Math.min(beyond, 30);
  return Math.max(options.retryBackoffMs, Math.min(backoff, options.maxRetryBackoffMs));
}

/**
 * A node seen alive after its power-off was confirmed, whose driver still reports it off: is the
 * renewal that makes it look alive one from before the power-off (keep the fence: it is judged
 * lost soon), or was it seen renewing after (it runs: abandon)? Only a fence still at
 * power-management can be the first: the taint and cleanup steps come after the node was judged
 * lost, later than its power-off. A node alive more than `unhealthyAfterMs` plus two checks after
 * the confirmation renewed after it.
 */
export function keepsFenceWhileAlive(
  status: FenceStatus,
  nowMs: number,
  options: { unhealthyAfterMs: number; checkIntervalMs: number },
): boolean {
  if (status.step !== "power-management" || status.phase !== "done") return false;
  const fencedAt = Date.parse(status.fencedAt ?? "");
  if (Number.isNaN(fencedAt)) return false;
  return nowMs - fencedAt <= options.unhealthyAfterMs + 2 * options.checkIntervalMs;
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
 *   powered it on) is neither tainted nor cleaned further (abandon: straight to recovery). Both
 *   read the power state first (returns.ts): a node reported off goes on to the taint instead. The
 *   taint and cleanup actions also re-read the power state right before they act;
 * - no state is a dead end: an error is retried (growing backoff), a recovery that never completes
 *   is re-evaluated after recoveryTimeout.
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
  // error: retry after a backoff that grows with the failures (the guard is asked before the retry)
  const since = status.lastTransitionTime ? Date.parse(status.lastTransitionTime) : 0;
  return observation.nowMs - since >= retryBackoffMs(status.retries, options) ? "retry" : "wait";
}

/** Taint, then cleanup, while the node is still lost; abandoned if it is seen alive again. */
function decideTaintOrCleanup(status: FenceStatus, observation: FenceObservation): FenceAction {
  const { step, phase } = status;
  const { health } = observation;
  const alive = health === "healthy" || health === "suspect";
  if (health !== "unhealthy") return alive ? "abandon" : "wait";
  return step === "taint" && phase !== "done" ? "taint" : "cleanup";
}

/**
 * Recovery: lift the taints once the node has been healthy long enough and its stale pods are gone.
 * One that has not finished within recoveryTimeout is re-evaluated, unless the node was fenced and
 * cleaned and is still lost: that one rests here until the node returns, holding nothing.
 */
function decideRecovery(
  status: FenceStatus,
  observation: FenceObservation,
  options: DecideOptions,
): FenceAction {
  const { health } = observation;
  if (status.phase === "done") return "wait";
  const ready = health === "healthy" && observation.healthyForMs >= options.healthyBeforeUnfenceMs;
  if (ready && (observation.stalePods === 0 || observation.healthyForMs >= options.staleWaitMs)) {
    return "finish-recovery";
  }
  // With no evidence either way (a controller just restarted, or blind) nothing is re-evaluated.
  if (health === "unobserved") return "wait";
  const since = Date.parse(status.lastTransitionTime ?? "");
  const overdue = !Number.isNaN(since) && observation.nowMs - since >= options.recoveryTimeoutMs;
  const resting = typeof status.cleanedAt === "string" && status.cleanedAt !== "" && health === "unhealthy";
  return overdue && !resting ? "reevaluate" : "wait";
}
