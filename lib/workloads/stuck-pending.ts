// kube-scheduler can leave a StatefulSet pod unscheduled for minutes after its claim is bound: its
// last attempt saw the claim still unbound (the binder's update not yet in its cache), marked the
// pod unschedulable, and the claim's own update did not move it back to the active queue. It is
// retried only at the next unrelated cluster event or the 5-minute flush (seen once in the gate on
// the sim, 2 min 22 s). A pod in that state is deleted so its controller recreates it, which the
// scheduler then places at once: this is setup before any fault, never part of a timeline.
import { k8s } from "../kube/client.js";

/** How long a Pending pod with every claim bound may wait for the scheduler before it is recreated. */
export const STUCK_PENDING_MS = 20_000;

function unscheduled(pod: k8s.V1Pod, nowMs: number): boolean {
  const created = pod.metadata?.creationTimestamp?.getTime() ?? nowMs;
  return (
    pod.spec?.nodeName === undefined &&
    pod.metadata?.deletionTimestamp === undefined &&
    nowMs - created > STUCK_PENDING_MS
  );
}

/**
 * Deletes the pods among `pods` that have waited unscheduled longer than STUCK_PENDING_MS although
 * every PersistentVolumeClaim they use is bound; returns their names.
 */
export async function recreateStuckPending(
  kc: k8s.KubeConfig,
  namespace: string,
  pods: readonly k8s.V1Pod[],
): Promise<string[]> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const recreated: string[] = [];
  for (const pod of pods.filter((p) => unscheduled(p, Date.now()))) {
    const claims = (pod.spec?.volumes ?? []).flatMap((v) =>
      v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : [],
    );
    const bound = await Promise.all(
      claims.map(
        async (name) =>
          (await core.readNamespacedPersistentVolumeClaim({ namespace, name })).status?.phase === "Bound",
      ),
    );
    if (claims.length === 0 || !bound.every(Boolean)) continue;
    const name = pod.metadata?.name ?? "";
    await core.deleteNamespacedPod({ namespace, name }).catch(() => undefined);
    recreated.push(name);
  }
  return recreated;
}
