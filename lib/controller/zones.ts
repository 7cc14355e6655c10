// Zone states, as the node lifecycle controller computes them (reference 003), from the nodes this
// controller sees: a zone is the node's topology.kubernetes.io/zone label (no label: the zone "").
// - FullDisruption: no node of the zone ready, at least one not ready;
// - PartialDisruption: more than 2 nodes not ready and at least unhealthyZoneThreshold of them;
// - Normal: anything else.
// "Not ready" here is the controller's own verdict: judged lost, Ready not True while renewing, or
// being fenced. Control-plane nodes are left out, as the guard leaves them out of its budgets.

export type ZoneState = "Normal" | "PartialDisruption" | "FullDisruption";

export interface ZoneMember {
  zone: string;
  notReady: boolean;
}

export interface ZoneView {
  state: ZoneState;
  notReady: number;
  total: number;
}

/** Upstream's constant: a zone with 2 nodes or fewer not ready is never partially disrupted. */
export const PARTIAL_DISRUPTION_MIN_NOT_READY = 3;

export function zoneState(notReady: number, total: number, unhealthyZoneThreshold: number): ZoneState {
  const ready = total - notReady;
  if (ready === 0 && notReady > 0) return "FullDisruption";
  if (notReady >= PARTIAL_DISRUPTION_MIN_NOT_READY && notReady / total >= unhealthyZoneThreshold) {
    return "PartialDisruption";
  }
  return "Normal";
}

/** Every zone's state, by zone name. */
export function zoneStates(
  members: readonly ZoneMember[],
  unhealthyZoneThreshold: number,
): Map<string, ZoneView> {
  const counts = new Map<string, { notReady: number; total: number }>();
  for (const m of members) {
    const c = counts.get(m.zone) ?? { notReady: 0, total: 0 };
    c.total += 1;
    if (m.notReady) c.notReady += 1;
    counts.set(m.zone, c);
  }
  return new Map(
    [...counts].map(([zone, c]) => [
      zone,
      { ...c, state: zoneState(c.notReady, c.total, unhealthyZoneThreshold) },
    ]),
  );
}

/**
 * Every zone fully disrupted, with more than one node not ready: upstream stops all evictions then
 * (the control plane's own network is the likelier cause). A cluster of one worker that loses it
 * is not such a case: one node is a node lost alone.
 */
export function allZonesDisrupted(zones: ReadonlyMap<string, ZoneView>): boolean {
  const views = [...zones.values()];
  const notReady = views.reduce((sum, z) => sum + z.notReady, 0);
  return views.length > 0 && notReady > 1 && views.every((z) => z.state === "FullDisruption");
}
