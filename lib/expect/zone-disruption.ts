// The node lifecycle controller's zone states and the taint (eviction) rate each one gets, as
// kube-controller-manager v1.34 computes them (node_lifecycle_controller.go: ComputeZoneState,
// handleDisruption, setLimiterInZone, ReducedQPSFunc; reference 003), and the zone layouts and
// windows the zone-disruption scenarios derive from the profile's knobs. Pure logic.
import { leaseRenewIntervalMs, type TimingProfile } from "../cluster/profiles.js";

export const ZONE_STATES = ["Initial", "Normal", "PartialDisruption", "FullDisruption"] as const;
export type ZoneState = (typeof ZONE_STATES)[number];

/** The knobs the zone logic reads (kube-controller-manager flags). */
export type ZoneKnobs = Pick<
  TimingProfile,
  "nodeEvictionRate" | "secondaryNodeEvictionRate" | "unhealthyZoneThreshold" | "largeClusterSizeThreshold"
>;

/**
 * A zone's state from its nodes' Ready conditions: FullDisruption with no Ready node,
 * PartialDisruption with more than 2 not Ready and at least the threshold's share of the zone,
 * else Normal. Compared in float32, as upstream does.
 */
export function zoneState(notReady: number, ready: number, unhealthyZoneThreshold: number): ZoneState {
  if (ready === 0 && notReady > 0) return "FullDisruption";
  const share = Math.fround(Math.fround(notReady) / Math.fround(notReady + ready));
  if (notReady > 2 && share >= Math.fround(unhealthyZoneThreshold)) return "PartialDisruption";
  return "Normal";
}

/**
 * Nodes tainted per second in a zone of `zoneSize` nodes in `state`. Every zone fully disrupted
 * (`allFullyDisrupted`): none anywhere ("master disruption mode"). One zone fully disrupted while
 * others are not: the normal rate. Partially disrupted: the secondary rate if the zone has more
 * nodes than largeClusterSizeThreshold, else none.
 */
export function zoneEvictionRate(
  knobs: ZoneKnobs,
  state: ZoneState,
  zoneSize: number,
  allFullyDisrupted = false,
): number {
  if (allFullyDisrupted) return 0;
  if (state === "PartialDisruption")
    return zoneSize > knobs.largeClusterSizeThreshold ? knobs.secondaryNodeEvictionRate : 0;
  return knobs.nodeEvictionRate;
}

/** Between two taints at `rate` nodes per second (burst 1); Infinity when the rate is 0. */
export function taintGapMs(rate: number): number {
  return rate > 0 ? 1000 / rate : Infinity;
}

/** The fewest not-Ready nodes that make a zone of `zoneSize` PartialDisruption; undefined: none does. */
export function partialDisruptionLoss(zoneSize: number, unhealthyZoneThreshold: number): number | undefined {
  for (let lost = 3; lost < zoneSize; lost++) {
    if (zoneState(lost, zoneSize - lost, unhealthyZoneThreshold) === "PartialDisruption") return lost;
  }
  return undefined;
}

/**
 * A zone the scenarios carve out of the workers: `size` nodes; `firstLoss` of them lost first (the
 * fewest that make it PartialDisruption); then `judged` more (still PartialDisruption, at least one
 * node Ready), whose taints and evictions the scenario judges.
 */
export interface ZonePlan {
  size: number;
  firstLoss: number;
  judged: number;
  /** Taint rate once partially disrupted (0: none). */
  partialRate: number;
}

/** Whether `plan` stays PartialDisruption with every node it loses lost, one still Ready. */
function staysPartial(plan: Omit<ZonePlan, "partialRate">, threshold: number): boolean {
  const lost = plan.firstLoss + plan.judged;
  return lost < plan.size && zoneState(lost, plan.size - lost, threshold) === "PartialDisruption";
}

/**
 * The smallest zone whose partial disruption stops evictions (at most largeClusterSizeThreshold
 * nodes): PartialDisruption with `judged` more nodes lost and one still Ready.
 */
export function smallZonePlan(knobs: ZoneKnobs, judged = 1): ZonePlan | undefined {
  for (let size = 3 + judged + 1; size <= knobs.largeClusterSizeThreshold; size++) {
    const firstLoss = partialDisruptionLoss(size, knobs.unhealthyZoneThreshold);
    if (firstLoss === undefined) continue;
    if (staysPartial({ size, firstLoss, judged }, knobs.unhealthyZoneThreshold))
      return { size, firstLoss, judged, partialRate: 0 };
  }
  return undefined;
}

/**
 * The smallest large zone (largeClusterSizeThreshold + 1 nodes or more) whose partial disruption
 * taints at the secondary rate, with `judged` more nodes lost after it.
 */
export function largeZonePlan(knobs: ZoneKnobs, judged = 3): ZonePlan | undefined {
  const threshold = knobs.unhealthyZoneThreshold;
  for (
    let size = knobs.largeClusterSizeThreshold + 1;
    size <= knobs.largeClusterSizeThreshold + 1000;
    size++
  ) {
    const firstLoss = partialDisruptionLoss(size, threshold);
    if (firstLoss !== undefined && staysPartial({ size, firstLoss, judged }, threshold))
      return { size, firstLoss, judged, partialRate: zoneEvictionRate(knobs, "PartialDisruption", size) };
  }
  return undefined;
}

/** When a node stopped at the fault goes Ready=Unknown: its last renewal up to one renewal before, seen at a monitor pass. */
export function unknownAfterStopMs(profile: TimingProfile): { minMs: number; maxMs: number } {
  const graceMs = profile.nodeMonitorGracePeriodSeconds * 1000;
  return {
    minMs: graceMs - leaseRenewIntervalMs(profile),
    maxMs: graceMs + profile.nodeMonitorPeriodSeconds * 1000,
  };
}

/** kube-controller-manager's client rate limit: the profile's, or upstream's 20 QPS with a burst of 30. */
export function controllerManagerClient(profile: TimingProfile): { qps: number; burst: number } {
  return profile.controllerManagerClient ?? { qps: 20, burst: 30 };
}

/**
 * The API requests the node lifecycle controller sends for one node it newly sees lost, through
 * its one rate-limited client: the node's status (every condition Unknown), one status update per
 * Ready pod on it (MarkPodsNotReady; `pods` counts every pod, an upper bound), and the NoSchedule
 * unreachable taint (a GET and an UPDATE, from its node-update workers at the same time).
 */
export function lostNodeRequests(pods: number): number {
  return 1 + pods + 2;
}

/**
 * How much later than a lone lost node's the monitor pass that sees `requests` worth of newly lost
 * nodes ends: past the client's burst each request waits for a token. The pass computes the zone
 * states only after every node's updates (monitorNodeHealth, then handleDisruption), so a mass loss
 * moves the zone-state transition by this much.
 */
export function clientBacklogMs(profile: TimingProfile, requests: number): number {
  const { burst } = controllerManagerClient(profile);
  return Math.ceil((Math.max(0, requests - burst) / controllerRequestRate(profile)) * 1000);
}

/**
 * One Node update's round trip as the node lifecycle controller waits for it when it lifts taints
 * one node after another (entering master disruption mode, handleDisruption calls
 * markNodeAsReachable for each node in turn). Measured on the 2-core development machine at 1000
 * workers (profile large, every-zone-full): 995 nodes' taints lifted in 15.9 s and in 17.6 s, 16.0
 * and 17.7 ms a node; planned at 20.
 */
export const NODE_UPDATE_ROUND_TRIP_MS = 20;

/**
 * How long the entering pass takes to lift the NoExecute taints of `nodes` nodes: two calls a node
 * at the client's rate, or one round trip a node, whichever is slower (a loop that waits for each
 * answer gains nothing from a higher QPS).
 */
export function taintLiftMs(profile: TimingProfile, nodes: number): number {
  const perNodeMs = Math.max((2 / controllerRequestRate(profile)) * 1000, NODE_UPDATE_ROUND_TRIP_MS);
  return Math.ceil(nodes * perNodeMs);
}

/**
 * The requests a second kube-apiserver answers the node lifecycle controller in a mass loss when
 * its client may send more: its monitor pass's workers each wait for an answer. On the 2-core
 * development machine beside a 1000-worker sim, a client allowed 200 QPS got about 163 answered
 * (4690 requests past the burst in 28.7 s; every-zone-full at profile large).
 */
export const APISERVER_ANSWERS_PER_SECOND = 150;

/** How fast the node lifecycle controller's requests go in a mass loss: its client's QPS, or the API server's pace when slower. */
export function controllerRequestRate(profile: TimingProfile): number {
  return Math.min(controllerManagerClient(profile).qps, APISERVER_ANSWERS_PER_SECOND);
}

/**
 * How long after a node went Unknown its pods would be evicted at the normal rate: one taint gap,
 * the default unreachable toleration, and a second for the taint manager. A scenario that says
 * "no eviction" watches at least this long.
 */
export function normalEvictionByMs(profile: TimingProfile): number {
  return taintGapMs(profile.nodeEvictionRate) + profile.defaultUnreachableTolerationSeconds * 1000 + 1000;
}
