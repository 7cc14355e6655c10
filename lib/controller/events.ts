// Events about nodes with constant reasons: timelines and alerts match on these.
import { randomBytes } from "node:crypto";
import pRetry from "p-retry";
import { apiStatus, k8s } from "../kube/client.js";

/** Node events live in "default", where kubectl describe node finds them. */
export const NODE_EVENT_NAMESPACE = "default";

export const EVENT_REASONS = {
  nodeUnhealthy: "NodeUnhealthy",
  guardHeld: "FenceGuardHeld",
  /** Lost, but nothing to release (graceful shutdown, empty node): not fenced. */
  nothingToRelease: "NothingToRelease",
  fenceStarted: "FenceStarted",
  fenceSucceeded: "FenceSucceeded",
  fenceFailed: "FenceFailed",
  fenceAborted: "FenceAborted",
  /** The node runs again after its confirmed power-off (powered on by someone): no taint, no cleanup. */
  fenceAbandoned: "FenceAbandoned",
  /** A recovery that never completed found the node lost and off, never released: its fence went on to the taint. */
  fenceResumed: "FenceResumed",
  /** A recovery that never completed ended after recoveryTimeout: taints lifted, the node judged afresh. */
  recoveryTimedOut: "RecoveryTimedOut",
  /** A NodeFence the controller will not act on (named other than its node). */
  fenceRefused: "FenceRefused",
  /** Lost with others of its zone in one event: held until node-monitor-grace-period (fleet.ts). */
  correlatedSilenceHeld: "FenceHeldCorrelatedSilence",
  /** Every zone fully disrupted: nothing is fenced (fleet.ts). */
  allZonesDisruptedHeld: "FenceHeldAllZonesDisrupted",
  /** The fleet-wide fence rate is used up: the fence starts when a token is free (fence-rate.ts). */
  fleetRateHeld: "FenceHeldFleetRate",
  /** Per-node fence rate limit reached: a flapping node is held. */
  fenceRateLimited: "FenceRateLimited",
  /** The NodeFence was deleted by hand: its taints were lifted. */
  fenceCancelled: "FenceCancelled",
  /** The Node was deleted and registered again under its name mid-fence: the fence ended untouched. */
  fenceSuperseded: "FenceSuperseded",
  /** Cleanup ended with pods left (finalizers, or the cleanup timeout). */
  cleanupIncomplete: "CleanupIncomplete",
  /** A taint of this controller's that no fence owned any more was removed. */
  orphanTaintRemoved: "OrphanTaintRemoved",
  outOfServiceTainted: "OutOfServiceTaintAdded",
  podsForceDeleted: "PodsForceDeleted",
  volumeAttachmentsRemoved: "VolumeAttachmentsRemoved",
  nodeRecovered: "NodeRecovered",
} as const;

export type EventReason = (typeof EVENT_REASONS)[keyof typeof EVENT_REASONS];

export const EVENT_SOURCE = "rekindle-controller";

/**
 * Tries beyond the first when the API server fails or is unreachable (5xx, 429, no status). An
 * event is recorded once per cause (the controller remembers it was sent), so a transient failure
 * would otherwise lose it for good, and timelines and alerts match on these.
 */
export const EVENT_RETRIES = 3;

function isTransient(error: unknown): boolean {
  const status = apiStatus(error);
  return status === undefined || status === 429 || status >= 500;
}

export async function recordNodeEvent(
  kc: k8s.KubeConfig,
  node: string,
  reason: EventReason,
  message: string,
  type: "Normal" | "Warning" = "Normal",
): Promise<void> {
  const now = new Date();
  const api = kc.makeApiClient(k8s.CoreV1Api);
  const name = `${node}.${randomBytes(6).toString("hex")}`;
  const body: k8s.CoreV1Event = {
    metadata: { name, namespace: NODE_EVENT_NAMESPACE },
    involvedObject: { kind: "Node", name: node, uid: node, apiVersion: "v1" },
    reason,
    message,
    type,
    source: { component: EVENT_SOURCE },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
  // One name for every try: a 409 after a lost response means an earlier try recorded it.
  const createOnce = async () => {
    try {
      await api.createNamespacedEvent({ namespace: NODE_EVENT_NAMESPACE, body });
    } catch (error) {
      if (apiStatus(error) !== 409) throw error;
    }
  };
  await pRetry(createOnce, {
    retries: EVENT_RETRIES,
    minTimeout: 250,
    factor: 2,
    shouldRetry: ({ error }) => isTransient(error),
  });
}
