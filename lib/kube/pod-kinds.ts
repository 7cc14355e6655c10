// Pods the kubelet and the controllers treat apart from workload pods: critical pods (the kubelet's
// eviction manager never evicts them; its graceful shutdown ends them last), DaemonSet pods (they
// belong to their node) and static pods with their mirror pods (the kubelet's own).
import type { k8s } from "./client.js";

/** scheduling.SystemCriticalPriority: system-cluster-critical; system-node-critical is 1000 above. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;
/** The kubelet marks the API copy of a static pod with this annotation. */
export const MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";
/** Where the kubelet got a pod ("api", "file", "http"); pods read from the API carry none. */
export const CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source";

export function isMirrorPod(pod: k8s.V1Pod): boolean {
  return pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
}

/** A pod from a file or URL on the node rather than from the API (kubelettypes.IsStaticPod). */
export function isStaticPod(pod: k8s.V1Pod): boolean {
  const source = pod.metadata?.annotations?.[CONFIG_SOURCE_ANNOTATION];
  return source !== undefined && source !== "api";
}

/**
 * kubelettypes.IsCriticalPod: static and mirror pods, and pods of priority at or above
 * system-cluster-critical (system-node-critical pods such as kube-proxy and CNI agents).
 */
export function isCriticalPod(pod: k8s.V1Pod): boolean {
  return isStaticPod(pod) || isMirrorPod(pod) || (pod.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
}

/** Controlled by a DaemonSet: one per node, recreated on the node when it goes. */
export function isDaemonSetPod(pod: k8s.V1Pod): boolean {
  return pod.metadata?.ownerReferences?.some((o) => o.kind === "DaemonSet" && o.controller === true) ?? false;
}
