// every-zone-full's other zones: the workers outside its own zone, all lost first and tainted at
// the normal rate zone by zone before the last zone goes. On a fleet their zones are split so
// that wait stays short.
import type { TimingProfile } from "../../lib/cluster/profiles.js";
import { taintGapMs } from "../../lib/expect/zone-disruption.js";
import { REST_ZONE_PREFIX } from "./shared.js";

/**
 * The longest the other zones' NoExecute taints may take at the normal rate before the scenario
 * splits those nodes into smaller zones. Each zone has its own tainter, which takes its first node
 * at once (a burst of 1) and one more per 1/rate seconds: a thousand nodes in 3 zones at upstream's
 * 0.1/s would take 55 minutes; in zones of 7, one minute. Every zone is still fully disrupted,
 * which is what the scenario is about; on a scenario-sized cluster nothing is split.
 */
export const OTHER_ZONES_TAINT_BUDGET_MS = 60_000;

/** The most nodes a zone may hold and be tainted whole within the budget at the profile's normal rate. */
export function otherZoneSize(profile: TimingProfile): number {
  return 1 + Math.floor(OTHER_ZONES_TAINT_BUDGET_MS / taintGapMs(profile.nodeEvictionRate));
}

/** `nodes` grouped by their zone label now (unlabelled nodes under ""). */
export function byZone(
  nodes: readonly string[],
  labels: ReadonlyMap<string, string | undefined>,
): string[][] {
  const groups = new Map<string, string[]>();
  for (const node of nodes) {
    const zone = labels.get(node) ?? "";
    groups.set(zone, [...(groups.get(zone) ?? []), node]);
  }
  return [...groups.values()];
}

/** `nodes` in zones `zd-rest-<k>` of at most `size` nodes each, if any zone of theirs is larger; else none. */
export function splitOtherZones(
  nodes: readonly string[],
  labels: ReadonlyMap<string, string | undefined>,
  size: number,
): Map<string, string[]> {
  const split = new Map<string, string[]>();
  if (byZone(nodes, labels).every((group) => group.length <= size)) return split;
  for (let i = 0; i < nodes.length; i += size)
    split.set(`${REST_ZONE_PREFIX}${split.size + 1}`, nodes.slice(i, i + size));
  return split;
}
