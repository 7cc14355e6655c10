// The kubelet's eviction ranking under node pressure (Node-pressure Eviction, "Pod selection"):
// first pods whose usage of the starved resource exceeds their request, then by priority (lowest
// first), then by how far usage exceeds the request (most first). A pod with no stats yet
// (admitted, its containers not started) goes before every other: the kubelet's comparators rank a
// pod whose stats are not found first (eviction/helpers.go exceedMemoryRequests,
// exceedDiskRequests). Guaranteed pods and Burstable pods below their requests therefore go last,
// lowest priority first. Critical pods are ranked like any other, but the eviction manager refuses
// to evict them (evictPod: "cannot evict a critical pod") and takes the next one; DaemonSet pods
// get no special treatment.
import { isPodTerminal, type k8s } from "./client.js";
import { isCriticalPod } from "./pod-kinds.js";
import { parseQuantity } from "./quantity.js";

export type StarvedResource = "memory" | "ephemeral-storage";

export interface EvictionCandidate {
  namespace: string;
  name: string;
  priority: number;
  /** Sum of the containers' requests for the resource, in bytes. */
  requestBytes: number;
  /** What the pod uses, in bytes (the sim reads it from an annotation; unknown = 0). */
  usageBytes: number;
  /** The pod has not started, so the kubelet has no stats of it: it is ranked first. Default false. */
  noStats?: boolean;
}

/** The sim's stand-in for cAdvisor: a pod's simulated usage, e.g. "memory=200Mi,ephemeral-storage=1Gi". */
export const SIM_USAGE_ANNOTATION = "rekindle.dev/sim-usage";

export function requestBytes(pod: k8s.V1Pod, resource: StarvedResource): number {
  let total = 0;
  for (const container of pod.spec?.containers ?? []) {
    const request = container.resources?.requests?.[resource];
    if (request !== undefined) total += parseQuantity(request);
  }
  return total;
}

export function simulatedUsageBytes(pod: k8s.V1Pod, resource: StarvedResource): number {
  const text = pod.metadata?.annotations?.[SIM_USAGE_ANNOTATION] ?? "";
  for (const part of text.split(",")) {
    const [key, value] = part.split("=").map((s) => s.trim());
    if (key === resource && value) return parseQuantity(value);
  }
  return 0;
}

/** Whether the pod's containers were started (a kubelet has stats of it from then on). */
export function podStarted(pod: k8s.V1Pod): boolean {
  return pod.status?.phase === "Running" || (pod.status?.containerStatuses ?? []).length > 0;
}

export function evictionCandidate(
  pod: k8s.V1Pod,
  resource: StarvedResource,
  usageBytes: number,
): EvictionCandidate {
  return {
    namespace: pod.metadata?.namespace ?? "",
    name: pod.metadata?.name ?? "",
    priority: pod.spec?.priority ?? 0,
    requestBytes: requestBytes(pod, resource),
    usageBytes,
    ...(podStarted(pod) ? {} : { noStats: true }),
  };
}

/** Candidates in the order the kubelet evicts them. */
export function kubeletEvictionOrder(candidates: readonly EvictionCandidate[]): EvictionCandidate[] {
  const exceeds = (c: EvictionCandidate) => c.usageBytes > c.requestBytes;
  return [...candidates].sort((a, b) => {
    if ((a.noStats ?? false) !== (b.noStats ?? false)) return a.noStats === true ? -1 : 1;
    if (exceeds(a) !== exceeds(b)) return exceeds(a) ? -1 : 1;
    if (a.priority !== b.priority) return a.priority - b.priority;
    return b.usageBytes - b.requestBytes - (a.usageBytes - a.requestBytes);
  });
}

/**
 * The pod the kubelet's eviction manager evicts next among `pods` (those it admitted): the first
 * in its order that has not ended and is not critical, started or not (the kubelet ranks its
 * active pods, not only those whose containers run). Undefined: nothing it may evict.
 */
export function nextEvictionVictim(
  pods: readonly k8s.V1Pod[],
  resource: StarvedResource,
  usageBytes: (pod: k8s.V1Pod, resource: StarvedResource) => number = simulatedUsageBytes,
): EvictionCandidate | undefined {
  const active = pods.filter((p) => !isPodTerminal(p) && !p.metadata?.deletionTimestamp);
  const ranked = kubeletEvictionOrder(
    active.map((p) => evictionCandidate(p, resource, usageBytes(p, resource))),
  );
  const critical = new Set(
    active.filter(isCriticalPod).map((p) => `${p.metadata?.namespace ?? ""}/${p.metadata?.name ?? ""}`),
  );
  return ranked.find((c) => !critical.has(`${c.namespace}/${c.name}`));
}
