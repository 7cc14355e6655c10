// What a real kubelet writes and KWOK does not: node pressure conditions, and pods it ends itself
// (evictions, graceful node shutdown). The sim writes the same fields the kubelet would, so the
// real controllers (node lifecycle, ReplicaSet, StatefulSet, attach-detach) react as they would.
import { isPodTerminal, k8s } from "../../../kube/client.js";
import { retryOnConflict } from "../../../kube/conflict.js";

export interface SimNodeCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
}

/** Sets one node condition, keeping the others; lastTransitionTime moves only when the status does. */
export async function setNodeCondition(
  kc: k8s.KubeConfig,
  nodeName: string,
  condition: SimNodeCondition,
): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await retryOnConflict(`condition ${condition.type} on node ${nodeName}`, async () => {
    const node = await core.readNodeStatus({ name: nodeName });
    const now = new Date();
    const conditions = node.status?.conditions ?? [];
    const previous = conditions.find((c) => c.type === condition.type);
    const next: k8s.V1NodeCondition = {
      ...condition,
      lastHeartbeatTime: now,
      lastTransitionTime: previous?.status === condition.status ? (previous.lastTransitionTime ?? now) : now,
    };
    const others = conditions.filter((c) => c.type !== condition.type);
    await core.replaceNodeStatus({
      name: nodeName,
      body: { ...node, status: { ...node.status, conditions: [...others, next] } },
    });
  });
}

export interface PodTermination {
  /** "Evicted" or "Terminated" (graceful node shutdown). */
  reason: string;
  message: string;
  /**
   * DisruptionTarget condition reason; the kubelet uses "TerminationByKubelet". None for a pod
   * refused at admission, which never ran.
   */
  disruptionReason?: string;
}

/**
 * Ends a pod the way the kubelet does: phase Failed with a reason, containers terminated. False
 * when it had already ended (someone else's write came first).
 */
export async function terminatePod(
  kc: k8s.KubeConfig,
  namespace: string,
  name: string,
  termination: PodTermination,
): Promise<boolean> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return retryOnConflict(`termination of pod ${namespace}/${name}`, async () => {
    const pod = await core.readNamespacedPodStatus({ namespace, name });
    if (isPodTerminal(pod)) return false;
    const now = new Date();
    const conditions = (pod.status?.conditions ?? [])
      .filter((c) => c.type !== "DisruptionTarget")
      .map((c) =>
        c.type === "Ready" || c.type === "ContainersReady"
          ? { ...c, status: "False", lastTransitionTime: now, reason: "PodFailed" }
          : c,
      );
    if (termination.disruptionReason !== undefined) {
      conditions.push({
        type: "DisruptionTarget",
        status: "True",
        reason: termination.disruptionReason,
        message: termination.message,
        lastTransitionTime: now,
      });
    }
    const containerStatuses = (pod.status?.containerStatuses ?? []).map((s) => ({
      ...s,
      ready: false,
      started: false,
      state: {
        terminated: {
          exitCode: 137,
          reason: "Error",
          startedAt: s.state?.running?.startedAt ?? now,
          finishedAt: now,
        },
      },
    }));
    await core.replaceNamespacedPodStatus({
      namespace,
      name,
      body: {
        ...pod,
        status: {
          ...pod.status,
          phase: "Failed",
          reason: termination.reason,
          message: termination.message,
          conditions,
          containerStatuses,
        },
      },
    });
    return true;
  });
}
