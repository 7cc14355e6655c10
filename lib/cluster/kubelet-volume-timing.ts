// When a real kubelet mounts an attachable volume, as pure arithmetic (the sim plays it in
// sim/kubelet-volumes.ts; the expected timelines bound it with worstAttachSeenMs).
//
// Its volume manager checks a pod's attachable volume (VerifyControllerAttachedVolume) from the
// pod's arrival. The check passes only once the volume is (1) reported in the node's
// status.volumesInUse, which the kubelet writes at its node-status cadence
// (nodeStatusUpdateFrequency, 10 s upstream; the kubelet's own comment: "it may take as much as 10
// seconds before this clears"), and (2) attached to the node. A failed check is retried after
// 0.5 s, doubling per failure, at most 2 min 2 s apart (the kubelet's exponential backoff of a
// volume operation). So a replacement pod whose volume is attached at once can still wait for the
// next status write and then for the next check: up to 15.5 s at a 10 s cadence. Measured on kind
// with rekindle-csi: the replacement ran 5.0 s and 9.1 s after its attach (docs/csi-attach.md).

/** The first wait after a failed volume check (the kubelet's initialDurationBeforeRetry). */
export const VOLUME_RETRY_INITIAL_MS = 500;
/** The longest wait between two checks (the kubelet's maxDurationBeforeRetry, 2 m 2 s). */
export const VOLUME_RETRY_MAX_MS = 122_000;

/**
 * When, after the first check, the check comes that first finds `readyAfterMs` passed: the first
 * of 0, 0.5, 1.5, 3.5, 7.5, 15.5 s… (each wait doubling, capped at VOLUME_RETRY_MAX_MS) at or
 * after it. 0 for a volume ready at the first check.
 */
export function firstCheckAtOrAfterMs(readyAfterMs: number): number {
  let at = 0;
  let wait = VOLUME_RETRY_INITIAL_MS;
  while (at < readyAfterMs) {
    at += wait;
    wait = Math.min(wait * 2, VOLUME_RETRY_MAX_MS);
  }
  return at;
}

/**
 * The longest a pod can wait after its volume is attached until the kubelet mounts it, when the
 * volume is attached by the pod's first check: the next status write may come a whole
 * `statusIntervalMs` later, and then the check after it. 15 500 ms at a 10 s cadence.
 */
export function worstAttachSeenMs(statusIntervalMs: number): number {
  return firstCheckAtOrAfterMs(statusIntervalMs);
}

/**
 * Where in its node-status cadence a node writes: an offset in [0, intervalMs) drawn from its name
 * (FNV-1a), so nodes do not all write at once and a node keeps its phase across sim restarts.
 */
export function statusPhaseMs(nodeName: string, intervalMs: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < nodeName.length; i++) {
    hash ^= nodeName.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % Math.max(1, Math.floor(intervalMs));
}

/** The node's next status write strictly after `nowMs` (epoch ms): its phase plus whole intervals. */
export function nextStatusWriteMs(nodeName: string, nowMs: number, intervalMs: number): number {
  const phase = statusPhaseMs(nodeName, intervalMs);
  const cycles = Math.floor((nowMs - phase) / intervalMs) + 1;
  return phase + cycles * intervalMs;
}
