// Thin helpers over @kubernetes/client-node used across providers, observers and the controller.
import * as k8s from "@kubernetes/client-node";

export { k8s };

export function loadKubeConfig(path: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** The HTTP status of a client-node ApiException, or undefined for anything else. */
export function apiStatus(error: unknown): number | undefined {
  if (error instanceof k8s.ApiException) return error.code;
  return undefined;
}

export function isNotFound(error: unknown): boolean {
  return apiStatus(error) === 404;
}

export function isConflict(error: unknown): boolean {
  return apiStatus(error) === 409;
}

/** Reads a Node condition's status ("True" | "False" | "Unknown"), or undefined when absent. */
export function nodeConditionStatus(node: k8s.V1Node, type: string): string | undefined {
  return node.status?.conditions?.find((c) => c.type === type)?.status;
}

export function isPodReady(pod: k8s.V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/** The pod has ended (Failed or Succeeded): its containers will not run again. */
export function isPodTerminal(pod: k8s.V1Pod | undefined): boolean {
  return pod?.status?.phase === "Failed" || pod?.status?.phase === "Succeeded";
}
