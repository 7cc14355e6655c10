// The kubelet's admission under node pressure (eviction_manager.go Admit), for the sim: while the
// eviction manager holds a pressure condition, a pod newly bound to the node is refused before it
// starts — under MemoryPressure a BestEffort pod that does not tolerate the memory-pressure taint,
// under DiskPressure (or any other) every pod that is not critical. Refused pods end Failed with
// reason Evicted, and the eviction loop never counts them. On kind this churned ~20 replacement
// pods in 3 s: a Deployment's replacement drawn back to the node before its NoSchedule taint.
import type { k8s } from "../../../kube/client.js";
import { isCriticalPod } from "../../../kube/pod-kinds.js";
import type { PressureKind } from "../../provider.js";

const TAINT: Record<PressureKind, string> = {
  memory: "node.kubernetes.io/memory-pressure",
  disk: "node.kubernetes.io/disk-pressure",
};

/** Kubernetes QoS: BestEffort when no container (init ones included) requests or limits anything. */
export function isBestEffort(pod: k8s.V1Pod): boolean {
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return containers.every((c) => {
    const { requests = {}, limits = {} } = c.resources ?? {};
    return Object.keys(requests).length === 0 && Object.keys(limits).length === 0;
  });
}

function toleratesTaint(pod: k8s.V1Pod, key: string): boolean {
  return (pod.spec?.tolerations ?? []).some(
    (t) =>
      (t.key === key || (t.key === undefined && t.operator === "Exists")) &&
      (t.effect ?? "NoSchedule") === "NoSchedule",
  );
}

/** Whether the kubelet, holding `kind` pressure, would refuse `pod` at admission. */
export function refusedUnderPressure(pod: k8s.V1Pod, kind: PressureKind): boolean {
  if (isCriticalPod(pod)) return false;
  if (kind === "disk") return true;
  return isBestEffort(pod) && !toleratesTaint(pod, TAINT.memory);
}

/**
 * The pods bound to the node that admission still decides: not ending, not ended, and not among
 * `admitted` (the UIDs the kubelet ran before it held the pressure, or let in since). A pod KWOK
 * started meanwhile is still undecided: KWOK starts every bound pod after a fixed delay, and under
 * load that delay can pass before the sim's admission looks, where the kubelet would never have
 * run the pod (seen: a BestEffort replacement bound to a node under DiskPressure ran there).
 */
export function awaitingAdmission(pods: readonly k8s.V1Pod[], admitted: ReadonlySet<string>): k8s.V1Pod[] {
  return pods.filter(
    (p) =>
      !p.metadata?.deletionTimestamp &&
      p.status?.phase !== "Failed" &&
      p.status?.phase !== "Succeeded" &&
      !admitted.has(p.metadata?.uid ?? ""),
  );
}

/** The kubelet's refusal message (lifecycle.predicateAdmitHandler via the eviction manager). */
export function refusalMessage(condition: string): string {
  return `The node had condition: [${condition}]. `;
}
