// An EndpointSlice's ready endpoints, as the Service's consumers see them. Each update of a slice
// replaces its whole endpoint list, so a transition carries the slice's full ready set; what a
// Service serves is the union over its slices (serving.ts).
import type { k8s } from "../kube/client.js";
import type { KindTransitions } from "./types.js";

/** The label the EndpointSlice controller (and any mirroring one) sets to the Service's name. */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/**
 * The slice's ready endpoints, each by its target pod's uid (so the same pod in two slices, as
 * during a rebalance or on a dual-stack Service, counts once), else its first address. An unset
 * `ready` condition means ready (the API's rule for consumers).
 */
export function readyEndpointKeys(slice: k8s.V1EndpointSlice | undefined): string[] {
  const keys = new Set<string>();
  for (const endpoint of slice?.endpoints ?? []) {
    if (endpoint.conditions?.ready === false) continue;
    const key = endpoint.targetRef?.uid ?? endpoint.addresses[0];
    if (key !== undefined && key !== "") keys.add(key);
  }
  return [...keys].sort();
}

/** "endpoints-changed" when the slice appears, goes, or its ready set changes. */
export const endpointSliceTransitions: KindTransitions<k8s.V1EndpointSlice> = (make, before, after) => {
  const ready = readyEndpointKeys(after);
  const readyBefore = readyEndpointKeys(before);
  if (before && after && ready.join(",") === readyBefore.join(",")) return [];
  const service = (after ?? before)?.metadata?.labels?.[SERVICE_NAME_LABEL] ?? "";
  return [
    make("endpoints-changed", {
      detail: { service, ready: String(ready.length), endpoints: ready.join(",") },
    }),
  ];
};
