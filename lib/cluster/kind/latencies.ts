// What a kind cluster's pods and volumes take to start and attach, for the expected timelines.
import { worstAttachSeenMs } from "../kubelet-volume-timing.js";
import type { ProviderLatencies } from "../provider.js";

/**
 * Container start on kind: image present in the node's containerd (fixtures use small images,
 * pulled once), sandbox + CNI (kindnet) + container start measure 1–3 s on a CI runner; 3 s is the
 * upper end so the expected timeline is not too tight on a busy 2–4 core machine.
 * Attach: none with the rekindle-shared StorageClass (shared-storage.ts: hostPath volumes, no
 * VolumeAttachment); with rekindle-csi, KIND_CSI_ATTACH_MS and the kubelet's wait.
 */
export const KIND_LATENCIES = {
  podStartMs: 3_000,
  attachMs: 0,
  frozenPowerOffMs: 6_000,
  powerOnMs: 6_000,
} as const;

/** rekindle-csi (notes/csi-attach.md): a VolumeAttachment attached 0.5–0.6 s after it is made. */
export const KIND_CSI_ATTACH_MS = 500;

/** KIND_LATENCIES; with rekindle-csi (attached), the attach path's own: KIND_CSI_ATTACH_MS and the kubelet's wait. */
export function kindLatencies(statusUpdateIntervalMs: number, attachRequired: boolean): ProviderLatencies {
  const attachSeenMs = worstAttachSeenMs(statusUpdateIntervalMs);
  const csi = attachRequired ? { attachMs: KIND_CSI_ATTACH_MS, attachSeenMs } : {};
  return { ...KIND_LATENCIES, ...csi };
}
