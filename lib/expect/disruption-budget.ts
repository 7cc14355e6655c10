// PodDisruptionBudgets as the disruption controller resolves them, and whether the eviction API
// (what `kubectl drain` calls) lets a lost node's pods go. Sources: pkg/controller/disruption
// (getExpectedPodCount) and pkg/registry/core/pod/storage/eviction.go.
import { RekindleError } from "../errors.js";
import type { k8s } from "../kube/client.js";

export interface DisruptionBudget {
  /** The budgets that select the pods (more than one: the eviction API refuses every eviction). */
  names: string[];
  /** status.desiredHealthy at full strength: pods that must stay Ready. */
  desiredHealthy: number;
  /** Replicas the budget lets go at once when all are Ready: replicas − desiredHealthy, at least 0. */
  maxUnavailable: number;
  /** unhealthyPodEvictionPolicy AlwaysAllow: pods not Ready may always be evicted. Default false (IfHealthyBudget). */
  alwaysAllowUnhealthy: boolean;
}

/** Whether a label selector (matchLabels and matchExpressions) selects these labels; an empty one selects all. */
export function selects(
  selector: k8s.V1LabelSelector | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const e of selector?.matchExpressions ?? []) {
    const value = labels[e.key];
    const values = e.values ?? [];
    const ok =
      e.operator === "In"
        ? value !== undefined && values.includes(value)
        : e.operator === "NotIn"
          ? value === undefined || !values.includes(value)
          : e.operator === "Exists"
            ? value !== undefined
            : e.operator === "DoesNotExist"
              ? value === undefined
              : false;
    if (!ok) return false;
  }
  return true;
}

/** An int or a percentage of `total`, rounded up (intstr.GetScaledValueFromIntOrPercent, roundUp). */
export function scaledValue(value: number | string, total: number, what: string): number {
  if (typeof value === "number") return value;
  const match = /^(\d+)%$/.exec(value.trim());
  if (match?.[1] === undefined) {
    if (/^\d+$/.test(value.trim())) return Number(value.trim());
    throw RekindleError.invalidInput(what, value, "an integer or a percentage such as 25%");
  }
  return Math.ceil((Number(match[1]) * total) / 100);
}

/**
 * The budget of pods with these labels among `budgets`, resolved against `replicas` as the
 * disruption controller does: maxUnavailable (rounded up) leaves replicas − maxUnavailable to keep;
 * minAvailable is that number (a percentage of replicas, rounded up). Undefined when none selects them.
 */
export function disruptionBudgetFor(
  budgets: readonly k8s.V1PodDisruptionBudget[],
  labels: Readonly<Record<string, string>>,
  replicas: number,
): DisruptionBudget | undefined {
  // A PDB with a null selector selects nothing; an empty one selects every pod of its namespace.
  const matching = budgets.filter((b) => b.spec?.selector !== undefined && selects(b.spec.selector, labels));
  const first = matching[0];
  if (first === undefined) return undefined;
  const name = (b: k8s.V1PodDisruptionBudget) => b.metadata?.name ?? "";
  const spec = first.spec ?? {};
  let desiredHealthy = 0;
  if (spec.maxUnavailable !== undefined) {
    const maxUnavailable = scaledValue(
      spec.maxUnavailable,
      replicas,
      `maxUnavailable of PodDisruptionBudget ${name(first)}`,
    );
    desiredHealthy = Math.max(0, replicas - maxUnavailable);
  } else if (spec.minAvailable !== undefined) {
    desiredHealthy = scaledValue(
      spec.minAvailable,
      replicas,
      `minAvailable of PodDisruptionBudget ${name(first)}`,
    );
  }
  return {
    names: matching.map(name),
    desiredHealthy,
    maxUnavailable: Math.max(0, replicas - desiredHealthy),
    alwaysAllowUnhealthy: spec.unhealthyPodEvictionPolicy === "AlwaysAllow",
  };
}

/**
 * Whether the eviction API lets `lost` not-Ready pods of `replicas` go (the node lifecycle
 * controller marked them not Ready when their node went Unknown): always without a budget or with
 * AlwaysAllow; never with two budgets; else (IfHealthyBudget) when the Ready rest still meet
 * desiredHealthy (> 0), or when it is 0 and some disruption is still allowed.
 */
export function evictionAllowed(
  budget: DisruptionBudget | undefined,
  replicas: number,
  lost: number,
): { allowed: boolean; why: string } {
  if (budget === undefined) return { allowed: true, why: "no PodDisruptionBudget selects its pods" };
  const names = budget.names.join(", ");
  if (budget.names.length > 1)
    return {
      allowed: false,
      why: `more than one PodDisruptionBudget selects its pods (${names}): the eviction API refuses`,
    };
  if (budget.alwaysAllowUnhealthy)
    return {
      allowed: true,
      why: `PodDisruptionBudget ${names}: unhealthyPodEvictionPolicy AlwaysAllow lets not-Ready pods go`,
    };
  const healthy = Math.max(0, replicas - lost);
  const allowed = budget.desiredHealthy > 0 ? healthy >= budget.desiredHealthy : healthy > 0;
  return {
    allowed,
    why: `PodDisruptionBudget ${names} keeps ${budget.desiredHealthy} of ${replicas} Ready (maxUnavailable ${budget.maxUnavailable}); ${healthy} still Ready: ${allowed ? "eviction allowed" : "eviction refused (429)"}`,
  };
}
