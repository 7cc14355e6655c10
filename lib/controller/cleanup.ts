// Releasing a fenced node's workloads: force-delete its pods (grace 0), then delete the
// VolumeAttachments the attach-detach controller leaves after a grace period. Also what a lost
// node holds (whether fencing would release anything) and the stale pods a returned node must drop.
import { isNotFound, isPodTerminal, k8s } from "../kube/client.js";
import { podsOnNode, volumeAttachmentsOnNode } from "../kube/queries.js";
import { isoNow, type ActionContext } from "./action-context.js";
import { EVENT_REASONS } from "./events.js";
import type { FenceStatus } from "./fence-state.js";
import { METRICS } from "./metrics.js";

/**
 * What fencing would release: the node's pods that have not ended (DaemonSet pods aside: they
 * belong to the node and tolerate its loss) plus its VolumeAttachments.
 */
export async function workloadsHeld(kc: k8s.KubeConfig, node: string): Promise<number> {
  const [pods, attachments] = await Promise.all([podsOnNode(kc, node), volumeAttachmentsOnNode(kc, node)]);
  const running = pods.filter(
    (p) => !isPodTerminal(p) && p.metadata?.ownerReferences?.some((o) => o.kind === "DaemonSet") !== true,
  );
  return running.length + attachments.length;
}

/** Pods still bound to the node and being deleted: a returned node must drop them first. */
export async function stalePods(kc: k8s.KubeConfig, node: string): Promise<number> {
  const pods = await podsOnNode(kc, node);
  return pods.filter((p) => p.metadata?.deletionTimestamp).length;
}

function ignoreNotFound(error: unknown): void {
  if (!isNotFound(error)) throw error;
}

/**
 * One cleanup pass for a fenced, tainted node; repeated each pass until nothing is left, then the
 * cleanup step is marked done.
 */
export async function cleanUpNode(context: ActionContext, node: string, status: FenceStatus): Promise<void> {
  const { kc, config, store } = context;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const now = isoNow(context);
  const started =
    status.step === "cleanup" && status.lastTransitionTime
      ? Date.parse(status.lastTransitionTime)
      : context.now();
  if (status.step !== "cleanup")
    await store.writeStatus(node, { ...status, step: "cleanup", phase: "running", lastTransitionTime: now });
  const pods = await podsOnNode(kc, node);
  for (const pod of pods) {
    await core
      .deleteNamespacedPod({
        name: pod.metadata?.name ?? "",
        namespace: pod.metadata?.namespace ?? "",
        gracePeriodSeconds: 0,
      })
      .catch(ignoreNotFound);
  }
  if (pods.length > 0)
    await context.event(
      node,
      EVENT_REASONS.podsForceDeleted,
      `force-deleted ${pods.length} pod(s) of fenced node ${node}`,
    );
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  const attachments = await volumeAttachmentsOnNode(kc, node);
  if (attachments.length > 0) {
    // The attach-detach controller detaches at once on an out-of-service node; remove what it leaves.
    if (context.now() - started < config.detachGraceMs) return;
    for (const va of attachments) {
      await storage.deleteVolumeAttachment({ name: va.metadata?.name ?? "" }).catch(ignoreNotFound);
    }
    await context.event(
      node,
      EVENT_REASONS.volumeAttachmentsRemoved,
      `removed ${attachments.length} VolumeAttachment(s) left on fenced node ${node}`,
    );
  }
  const remaining = (await podsOnNode(kc, node)).length;
  if (remaining > 0) return;
  const latest = (await store.read(node))?.status ?? status;
  await store.writeStatus(node, {
    ...latest,
    step: "cleanup",
    phase: "done",
    cleanedAt: now,
    message: "pods and volume attachments released",
    lastTransitionTime: now,
  });
  const detected = latest.detectedAt ? Date.parse(latest.detectedAt) : context.now();
  context.metrics.set(METRICS.timeToRecover[0], METRICS.timeToRecover[1], (context.now() - detected) / 1000, {
    node,
  });
}
