// The kubelet's eviction ranking under node pressure (Node-pressure Eviction, "Pod selection"):
// first pods whose usage of the starved resource exceeds their request, then by priority (lowest
// first), then by how far usage exceeds the request (most first). Guaranteed pods and Burstable
// pods below their requests therefore go last, lowest priority first.
import type { k8s } from "./client.js";
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
  };
}

/** Candidates in the order the kubelet evicts them. */
export function kubeletEvictionOrder(candidates: readonly EvictionCandidate[]): EvictionCandidate[] {
  const exceeds = (c: EvictionCandidate) => c.usageBytes > c.requestBytes;
  return [...candidates].sort((a, b) => {
    if (exceeds(a) !== exceeds(b)) return exceeds(a) ? -1 : 1;
    if (a.priority !== b.priority) return a.priority - b.priority;
    return b.usageBytes - b.requestBytes - (a.usageBytes - a.requestBytes);
  });
}
