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
function byZone(
  nodes: readonly string[],
  labels: ReadonlyMap<string, string | undefined>,
): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const node of nodes) {
    const zone = labels.get(node) ?? "";
    groups.set(zone, [...(groups.get(zone) ?? []), node]);
  }
  return groups;
}

/** The zones the other nodes are tainted in, and whether the scenario must first put them there. */
export interface OtherZones {
  zones: Map<string, string[]>;
  /** True when `zones` are new ones (`zd-rest-<k>`) the scenario carves; false: the nodes' own. */
  split: boolean;
}

/** `nodes`' own zones when none holds more than `size`; else zones `zd-rest-<k>` of at most `size`. */
export function otherZones(
  nodes: readonly string[],
  labels: ReadonlyMap<string, string | undefined>,
  size: number,
): OtherZones {
  const own = byZone(nodes, labels);
  if ([...own.values()].every((group) => group.length <= size)) return { zones: own, split: false };
  const zones = new Map<string, string[]>();
  for (let i = 0; i < nodes.length; i += size)
    zones.set(`${REST_ZONE_PREFIX}${zones.size + 1}`, nodes.slice(i, i + size));
  return { zones, split: true };
}
