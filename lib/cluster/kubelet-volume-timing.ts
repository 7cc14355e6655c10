// When a real kubelet mounts an attachable volume, as arithmetic (the sim plays it in
// sim/kubelet/volumes.ts; the expected timelines bound it with worstAttachSeenMs).
//
// Its volume manager mounts an attachable volume for a pod only once the volume is (1) reported
// in the node's status.volumesInUse, which the kubelet writes at its node-status cadence
// (nodeStatusUpdateFrequency, 10 s upstream; the kubelet's own comment: "it may take as much as 10
// seconds before this clears"), and (2) attached to the node. Its reconciler looks every 100 ms
// and, in v1.34, starts no attach check before (1) holds, so no retry backoff builds up while the
// volume waits. Measured on kind v1.34 with rekindle-csi (kubelet log, 2026-11-25): one
// VerifyControllerAttachedVolume per volume, started with the volume both reported and attached,
// none failed, also across a 6-minute Multi-Attach wait (force-delete-by-hand: the mount began
// 0.1 s after the attach); replacements ran 1.2–8.2 s after their attach (6 runs, container
// start included), as the next status write after the pod's arrival allows.

/** How often the kubelet's volume reconciler looks (its loop period). */
export const VOLUME_RECONCILER_LOOP_MS = 100;

/**
 * The longest a pod can wait after its volume is attached until the kubelet mounts it: the node's
 * next status write may come a whole `statusIntervalMs` later, then the reconciler's next look.
 * 10.1 s at a 10 s cadence.
 */
export function worstAttachSeenMs(statusIntervalMs: number): number {
  return statusIntervalMs + VOLUME_RECONCILER_LOOP_MS;
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
