// "Recovered means serving": a workload's Service loses ready endpoints after the fault and holds
// the wanted number again. What a Service serves is the union of its EndpointSlices' ready
// endpoints; each "endpoints-changed" transition carries one slice's whole ready set, since a
// slice update replaces its endpoint list.
import { relative, type Milestone } from "./milestone.js";
import type { Transition } from "./types.js";
import { isPodOf, podKey, type WorkloadRef } from "./workload-ref.js";

/** The workload's pods Ready just before the fault (Ready until no longer Ready, ended or gone). */
export function readyPodsAtFault(
  transitions: readonly Transition[],
  faultAtMs: number,
  workload: WorkloadRef,
): number {
  const ready = new Set<string>();
  for (const t of transitions) {
    if (t.atMs >= faultAtMs || !isPodOf(workload, t)) continue;
    if (t.name === "pod-ready") ready.add(podKey(t));
    if (t.name === "pod-unready" || t.name === "pod-terminal" || t.name === "pod-gone")
      ready.delete(podKey(t));
  }
  return ready.size;
}

/** The Service's slices as they change, in time order, and its ready endpoints across them. */
class ServiceEndpoints {
  readonly #slices = new Map<string, string[]>();

  apply(t: Transition): void {
    const endpoints = t.detail?.["endpoints"] ?? "";
    this.#slices.set(t.subject.uid ?? t.subject.name, endpoints === "" ? [] : endpoints.split(","));
  }

  /** Distinct ready endpoints over every slice (an endpoint in two slices counts once). */
  get ready(): number {
    return new Set([...this.#slices.values()].flat()).size;
  }
}

/**
 * `<id>:endpoints-lost`: the first instant at or after the fault when the workload's Service holds
 * fewer ready endpoints than wanted (the fault itself when it already did); `<id>:serving`: the
 * first instant after that when it holds the wanted number again. Wanted: `wantedReady`, else the
 * workload's pods Ready just before the fault. None without a Service, or when nothing is wanted.
 */
export function servingMilestones(
  transitions: readonly Transition[],
  faultAtMs: number,
  workload: WorkloadRef,
): Milestone[] {
  const { service, namespace, id } = workload;
  if (service === undefined) return [];
  const wanted = workload.wantedReady ?? readyPodsAtFault(transitions, faultAtMs, workload);
  if (wanted <= 0) return [];
  const changes = transitions
    .filter(
      (t) =>
        t.name === "endpoints-changed" &&
        t.subject.namespace === namespace &&
        t.detail?.["service"] === service,
    )
    .sort((a, b) => a.atMs - b.atMs);
  const endpoints = new ServiceEndpoints();
  const firstAfter = changes.findIndex((t) => t.atMs >= faultAtMs);
  const split = firstAfter === -1 ? changes.length : firstAfter;
  for (const t of changes.slice(0, split)) endpoints.apply(t);
  const out: Milestone[] = [];
  if (endpoints.ready < wanted) out.push({ name: `${id}:endpoints-lost`, atMs: 0 });
  for (const t of changes.slice(split)) {
    endpoints.apply(t);
    if (out.length === 0 && endpoints.ready < wanted)
      out.push({ name: `${id}:endpoints-lost`, ...relative(t, faultAtMs) });
    else if (out.length === 1 && endpoints.ready >= wanted) {
      out.push({ name: `${id}:serving`, ...relative(t, faultAtMs) });
      break;
    }
  }
  return out;
}
