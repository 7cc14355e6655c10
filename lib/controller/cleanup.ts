// Releasing a fenced node's workloads: force-delete its pods (grace 0), then delete the
// VolumeAttachments the attach-detach controller leaves after a grace period. Also what a lost
// node holds (whether fencing would release anything) and the stale pods a returned node must drop.
//
// DaemonSet and mirror (static) pods belong to the node: a DaemonSet that tolerates everything
// (kube-proxy, every CNI) is recreated on the fenced node at once, and a mirror pod stands for a
// manifest on the node's disk. Neither is deleted, counted, or waited for. A pod that a finalizer
// keeps after its force deletion is released as far as the node goes (its containers are gone with
// the power); it is named in the Events, never waited for, and cleanup is bounded in time.
import { isNotFound, isPodTerminal, k8s } from "../kube/client.js";
import { isDaemonSetPod, isMirrorPod } from "../kube/pod-kinds.js";
import { assertActing, isoNow, type ActionContext } from "./action-context.js";
import type { WorkloadReads } from "./cluster-caches.js";
import { EVENT_REASONS } from "./events.js";
import type { FenceStatus, NodeFence } from "./fence-state.js";

/** A pod the node itself owns: a DaemonSet's or a static pod's mirror. */
export function belongsToNode(pod: k8s.V1Pod): boolean {
  return isDaemonSetPod(pod) || isMirrorPod(pod);
}

/** Force-deleted (grace 0) and kept only by finalizers: nothing on the node holds it any more. */
export function heldOnlyByFinalizers(pod: k8s.V1Pod): boolean {
  return (
    pod.metadata?.deletionTimestamp !== undefined &&
    pod.metadata.deletionGracePeriodSeconds === 0 &&
    (pod.metadata.finalizers?.length ?? 0) > 0
  );
}

/** The pods fencing releases: not the node's own, not ended. */
export function releasablePods(pods: readonly k8s.V1Pod[]): k8s.V1Pod[] {
  return pods.filter((p) => !belongsToNode(p) && !isPodTerminal(p));
}

export interface HeldWorkloads {
  /** namespace/name of each releasable pod. */
  pods: string[];
  volumeAttachments: string[];
}

/** What fencing would release: the node's releasable pods plus its VolumeAttachments. */
export async function workloadsHeld(reads: WorkloadReads, node: string): Promise<HeldWorkloads> {
  const [pods, attachments] = await Promise.all([
    reads.podsOnNode(node),
    reads.volumeAttachmentsOnNode(node),
  ]);
  return {
    pods: releasablePods(pods).map(podName),
    volumeAttachments: attachments.map((a) => a.metadata?.name ?? ""),
  };
}

/** "2 pods (ns/a, ns/b) and 1 VolumeAttachment", for a log line; at most `shown` names each. */
export function describeHeld(held: HeldWorkloads, shown = 5): string {
  const list = (names: string[], noun: string) => {
    const more = names.length > shown ? `, +${names.length - shown} more` : "";
    return `${names.length} ${noun}${names.length === 1 ? "" : "s"} (${names.slice(0, shown).join(", ")}${more})`;
  };
  const parts = [
    ...(held.pods.length > 0 ? [list(held.pods, "pod")] : []),
    ...(held.volumeAttachments.length > 0 ? [list(held.volumeAttachments, "VolumeAttachment")] : []),
  ];
  return parts.length === 0 ? "nothing" : parts.join(" and ");
}

/** Pods still bound to the node and being deleted, that a returned kubelet must drop first. */
export async function stalePods(reads: WorkloadReads, node: string): Promise<number> {
  const pods = await reads.podsOnNode(node);
  return pods.filter((p) => p.metadata?.deletionTimestamp && !heldOnlyByFinalizers(p)).length;
}

function ignoreNotFound(error: unknown): void {
  if (!isNotFound(error)) throw error;
}

function podName(pod: k8s.V1Pod): string {
  return `${pod.metadata?.namespace ?? ""}/${pod.metadata?.name ?? ""}`;
}

/** Force-deletes the node's releasable pods not force-deleted yet (nor reported again), and says so. */
async function forceDeletePods(context: ActionContext, node: string): Promise<void> {
  const core = context.kc.makeApiClient(k8s.CoreV1Api);
  const releasable = releasablePods(await context.reads.podsOnNode(node));
  // Pods force-deleted already are not deleted again (nor reported again).
  const toDelete = releasable.filter(
    (p) => !(p.metadata?.deletionTimestamp && p.metadata.deletionGracePeriodSeconds === 0),
  );
  for (const pod of toDelete) {
    assertActing(context);
    await core
      .deleteNamespacedPod({
        name: pod.metadata?.name ?? "",
        namespace: pod.metadata?.namespace ?? "",
        gracePeriodSeconds: 0,
      })
      .catch(ignoreNotFound);
  }
  if (toDelete.length > 0)
    await context.event(
      node,
      EVENT_REASONS.podsForceDeleted,
      `force-deleted ${toDelete.length} pod(s) of fenced node ${node}`,
    );
}

/**
 * Removes the VolumeAttachments left on the node once detachGrace has passed since the cleanup
 * started; false while it has not (the next pass looks again).
 */
async function removeLeftAttachments(
  context: ActionContext,
  node: string,
  started: number,
): Promise<boolean> {
  const { kc } = context;
  const attachments = await context.reads.volumeAttachmentsOnNode(node);
  if (attachments.length > 0) {
    // The attach-detach controller detaches at once on an out-of-service node; remove what it leaves.
    if (context.now() - started < context.config.detachGraceMs) return false;
    for (const va of attachments) {
      assertActing(context);
      await kc
        .makeApiClient(k8s.StorageV1Api)
        .deleteVolumeAttachment({ name: va.metadata?.name ?? "" })
        .catch(ignoreNotFound);
    }
    await context.event(
      node,
      EVENT_REASONS.volumeAttachmentsRemoved,
      `removed ${attachments.length} VolumeAttachment(s) left on fenced node ${node}`,
    );
  }
  return true;
}

/**
 * One cleanup pass for a fenced, tainted node (the caller re-checked that it is still lost and
 * powered off); repeated each pass until nothing is left or cleanupTimeoutMs has passed, then the
 * cleanup step is marked done.
 */
export async function cleanUpNode(
  context: ActionContext,
  fence: NodeFence,
  status: FenceStatus,
): Promise<void> {
  const { config, store } = context;
  const node = fence.spec.node;
  const started =
    status.step === "cleanup" && status.lastTransitionTime
      ? Date.parse(status.lastTransitionTime)
      : context.now();
  if (status.step !== "cleanup") {
    await store.writeStatus(fence, {
      ...status,
      step: "cleanup",
      phase: "running",
      lastTransitionTime: isoNow(context),
    });
  }
  await forceDeletePods(context, node);
  const timedOut = context.now() - started >= config.cleanupTimeoutMs;
  if (!(await removeLeftAttachments(context, node, started))) return;
  const left = releasablePods(await context.reads.podsOnNode(node));
  const finalized = left.filter(heldOnlyByFinalizers);
  const remaining = left.filter((p) => !heldOnlyByFinalizers(p));
  if (remaining.length > 0 && !timedOut) return;
  const leftovers = [
    ...finalized.map((p) => `${podName(p)} (finalizers ${(p.metadata?.finalizers ?? []).join(", ")})`),
    ...remaining.map((p) => `${podName(p)} (not gone after ${config.cleanupTimeoutMs} ms)`),
  ];
  if (leftovers.length > 0) {
    await context.event(
      node,
      EVENT_REASONS.cleanupIncomplete,
      `cleanup of fenced node ${node} done with pod(s) this controller leaves alone: ${leftovers.join("; ")}`,
      "Warning",
    );
  }
  assertActing(context);
  await store.writeStatus(fence, {
    ...(fence.status ?? status),
    step: "cleanup",
    phase: "done",
    cleanedAt: isoNow(context),
    message:
      leftovers.length === 0
        ? "pods and volume attachments released"
        : `pods and volume attachments released; left alone: ${leftovers.join("; ")}`,
    lastTransitionTime: isoNow(context),
  });
  context.metrics.cleanedUp(node, status, context.now());
}
