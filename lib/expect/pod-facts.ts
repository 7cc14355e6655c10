// What a pod template says about how the cluster treats its pods: how long they tolerate a lost
// node (the taint manager), their QoS class and priority (the kubelet's eviction and shutdown
// order), and their requests. Read from the manifest, as the API server and the kubelet would.
import { parseQuantity } from "../kube/quantity.js";
import { SIM_USAGE_ANNOTATION, type StarvedResource } from "../kube/eviction-order.js";
import { SYSTEM_CRITICAL_PRIORITY } from "../kube/pod-kinds.js";
import type { k8s } from "../kube/client.js";

export type QosClass = "Guaranteed" | "Burstable" | "BestEffort";

export const NOT_READY_TAINT = "node.kubernetes.io/not-ready";
export const UNREACHABLE_TAINT = "node.kubernetes.io/unreachable";
export const OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service";

/** The built-in PriorityClasses every cluster has. */
const BUILT_IN_PRIORITY: Readonly<Record<string, number>> = {
  "system-cluster-critical": SYSTEM_CRITICAL_PRIORITY,
  "system-node-critical": SYSTEM_CRITICAL_PRIORITY + 1000,
};

/** Whether a toleration matches a NoExecute taint with this key and no value (v1helper.ToleratesTaint). */
function toleratesNoExecute(t: k8s.V1Toleration, key: string): boolean {
  if (t.effect !== undefined && t.effect !== "" && t.effect !== "NoExecute") return false;
  if (t.key !== undefined && t.key !== "" && t.key !== key) return false;
  // An empty key matches every key only with operator Exists (validation requires it).
  const operator = t.operator ?? "Equal";
  if (operator === "Exists") return true;
  return (t.value ?? "") === "";
}

/**
 * How long pods with these tolerations stay on a node with the NoExecute taint `key`: the
 * smallest tolerationSeconds among the tolerations that match (the taint manager's
 * getMinTolerationTime; 0 or less is at once), null when every match has none (forever), and
 * `defaultMs` when none matches (the DefaultTolerationSeconds admission plugin's toleration, or
 * at once for taints it does not cover: pass 0).
 */
export function tolerationMs(
  tolerations: readonly k8s.V1Toleration[],
  key: string,
  defaultMs: number | null,
): number | null {
  const matching = tolerations.filter((t) => toleratesNoExecute(t, key));
  if (matching.length === 0) return defaultMs;
  const seconds = matching.flatMap((t) => (t.tolerationSeconds === undefined ? [] : [t.tolerationSeconds]));
  if (seconds.length === 0) return null;
  return Math.max(0, Math.min(...seconds)) * 1000;
}

/** A quantity from YAML: a string, or a number when written bare (`cpu: 1`). */
function quantity(value: string | number): number {
  return parseQuantity(String(value));
}

/** Requests with the API server's defaulting: a limit without a request is also the request. */
function effectiveRequests(container: k8s.V1Container): Record<string, string> {
  return { ...(container.resources?.limits ?? {}), ...(container.resources?.requests ?? {}) };
}

/**
 * The pod's QoS class as the kubelet computes it (GetPodQOS) over its containers and init
 * containers, from CPU and memory only: BestEffort with no request or limit; Guaranteed when
 * every container limits both and the summed requests equal the summed limits; else Burstable.
 */
export function qosClass(spec: k8s.V1PodSpec): QosClass {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  const add = (sums: Map<string, number>, name: string, written: string): boolean => {
    if (name !== "cpu" && name !== "memory") return false;
    const value = quantity(written);
    if (value <= 0) return false;
    sums.set(name, (sums.get(name) ?? 0) + value);
    return true;
  };
  for (const container of [...spec.containers, ...(spec.initContainers ?? [])]) {
    for (const [name, written] of Object.entries(effectiveRequests(container))) add(requests, name, written);
    const limited = Object.entries(container.resources?.limits ?? {}).filter(([name, written]) =>
      add(limits, name, written),
    );
    const names = new Set(limited.map(([name]) => name));
    if (!names.has("cpu") || !names.has("memory")) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return "BestEffort";
  // Summed as floats (100m = 0.1): equal within rounding.
  const same = (a: number, b: number | undefined) =>
    b !== undefined && Math.abs(a - b) <= 1e-9 * Math.max(a, b);
  const equal = [...requests].every(([name, value]) => same(value, limits.get(name)));
  return guaranteed && equal && requests.size === limits.size ? "Guaranteed" : "Burstable";
}

/** Summed requests of the regular containers for one resource, in bytes (the kubelet's eviction ranking). */
export function requestBytes(spec: k8s.V1PodSpec, resource: StarvedResource): number {
  let total = 0;
  for (const container of spec.containers) {
    const request = effectiveRequests(container)[resource];
    if (request !== undefined) total += quantity(request);
  }
  return total;
}

/** The sim's stand-in usage from the template's annotation (see eviction-order.ts), when it has one. */
export function simulatedUsage(
  annotations: Readonly<Record<string, string>> | undefined,
): Partial<Record<StarvedResource, number>> {
  const usage: Partial<Record<StarvedResource, number>> = {};
  for (const part of (annotations?.[SIM_USAGE_ANNOTATION] ?? "").split(",")) {
    const [key, value] = part.split("=").map((s) => s.trim());
    if ((key === "memory" || key === "ephemeral-storage") && value) usage[key] = quantity(value);
  }
  return usage;
}

export interface PriorityClassLike {
  name: string;
  value: number;
  globalDefault: boolean;
}

/**
 * The pod's priority as the Priority admission plugin sets it: spec.priority when written, else its
 * priorityClassName's value (built-in classes, or a PriorityClass among `classes`; 0 when the
 * class is not known here), else the globalDefault class's value, else 0.
 */
export function podPriority(spec: k8s.V1PodSpec, classes: readonly PriorityClassLike[]): number {
  if (spec.priority !== undefined) return spec.priority;
  const name = spec.priorityClassName;
  if (name !== undefined && name !== "") {
    return BUILT_IN_PRIORITY[name] ?? classes.find((c) => c.name === name)?.value ?? 0;
  }
  return classes.find((c) => c.globalDefault)?.value ?? 0;
}
