// The guard: never fence more than maxUnhealthy nodes (cluster-wide and per zone), never a
// control-plane or excluded node, nothing while paused. Pure: the controller feeds it a snapshot.
import { unhealthyBudget } from "./config.js";

export interface GuardNode {
  name: string;
  zone: string;
  controlPlane: boolean;
  excluded: boolean;
  /** Not matched by the controller's --node-selector: never fenced. */
  unselected?: boolean;
  unhealthy: boolean;
  /** Already being fenced (a NodeFence exists and is not finished). */
  fencing: boolean;
}

export type GuardDecision = { allowed: true } | { allowed: false; reason: GuardHoldReason; message: string };

export type GuardHoldReason =
  "Paused" | "ControlPlane" | "Excluded" | "NotSelected" | "ClusterBudget" | "ZoneBudget";

export interface GuardInput {
  nodes: readonly GuardNode[];
  maxUnhealthy: string;
  paused: boolean;
  /**
   * Nodes not judged lost yet that went silent with the candidate and have missed a renewal
   * (detect.ts, `peersSilentWith`): counted as unhealthy for this decision. Default none.
   */
  silentWith?: readonly string[];
}

/** Nodes that are not control-plane, and how many of them are unhealthy or being fenced. */
interface Tally {
  nodes: number;
  troubled: number;
}

interface GuardCounts {
  byName: Map<string, GuardNode>;
  all: Tally;
  zones: Map<string, Tally>;
}

/**
 * Counted once per view: a pass asks about every lost node, and counting the fleet for each was
 * quadratic (a zone outage of 334 of 1000 nodes: about a second of CPU per 15 s, bench:controller
 * profile, 2026-11-29). Only a frozen view (guardNodes') is remembered; any other is counted anew.
 */
const countsByView = new WeakMap<readonly GuardNode[], GuardCounts>();

function countsOf(nodes: readonly GuardNode[]): GuardCounts {
  const known = countsByView.get(nodes);
  if (known) return known;
  const counts: GuardCounts = { byName: new Map(), all: { nodes: 0, troubled: 0 }, zones: new Map() };
  for (const n of nodes) {
    if (!counts.byName.has(n.name)) counts.byName.set(n.name, n);
    if (n.controlPlane) continue;
    const troubled = n.unhealthy || n.fencing ? 1 : 0;
    let zone = counts.zones.get(n.zone);
    if (!zone) counts.zones.set(n.zone, (zone = { nodes: 0, troubled: 0 }));
    for (const tally of [counts.all, zone]) {
      tally.nodes += 1;
      tally.troubled += troubled;
    }
  }
  if (Object.isFrozen(nodes) && nodes.every((n) => Object.isFrozen(n))) countsByView.set(nodes, counts);
  return counts;
}

/** May `candidate` be fenced now? Counts nodes unhealthy or being fenced, the candidate included. */
export function guardDecision(candidate: string, input: GuardInput): GuardDecision {
  const counts = countsOf(input.nodes);
  const node = counts.byName.get(candidate);
  if (!node) return { allowed: false, reason: "Excluded", message: `node ${candidate} is unknown` };
  if (input.paused)
    return { allowed: false, reason: "Paused", message: "the controller is paused (ConfigMap paused=true)" };
  if (node.controlPlane)
    return { allowed: false, reason: "ControlPlane", message: `${candidate} is a control-plane node` };
  if (node.excluded)
    return { allowed: false, reason: "Excluded", message: `${candidate} carries the exclusion label` };
  if (node.unselected === true)
    return {
      allowed: false,
      reason: "NotSelected",
      message: `${candidate} is not matched by the controller's --node-selector`,
    };
  // The candidate counts as troubled too (a fence it starts makes it so).
  const self = node.unhealthy || node.fencing ? 0 : 1;
  const silent = silentTally(counts, node.zone, input.silentWith ?? []);
  const troubled = (silentCount: number) =>
    silentCount > 0
      ? `unhealthy, fencing or silent with ${candidate} past a renewal`
      : "unhealthy or fencing";
  const all = counts.all;
  const clusterBudget = unhealthyBudget(input.maxUnhealthy, all.nodes);
  const clusterTroubled = all.troubled + self + silent.all;
  if (clusterTroubled > clusterBudget) {
    return {
      allowed: false,
      reason: "ClusterBudget",
      message: `${clusterTroubled} of ${all.nodes} nodes ${troubled(silent.all)}; maxUnhealthy ${input.maxUnhealthy} allows ${clusterBudget}`,
    };
  }
  const zone = counts.zones.get(node.zone) ?? { nodes: 0, troubled: 0 };
  const zoneBudget = unhealthyBudget(input.maxUnhealthy, zone.nodes);
  const zoneTroubled = zone.troubled + self + silent.zone;
  if (zoneTroubled > zoneBudget) {
    return {
      allowed: false,
      reason: "ZoneBudget",
      message: `${zoneTroubled} of ${zone.nodes} nodes in zone ${node.zone} ${troubled(silent.zone)}; maxUnhealthy ${input.maxUnhealthy} allows ${zoneBudget}`,
    };
  }
  return { allowed: true };
}

/** How many of `silentWith` the counts do not count yet: cluster-wide, and in `zone`. */
function silentTally(
  counts: GuardCounts,
  zone: string,
  silentWith: readonly string[],
): { all: number; zone: number } {
  const tally = { all: 0, zone: 0 };
  for (const name of new Set(silentWith)) {
    const peer = counts.byName.get(name);
    if (!peer || peer.controlPlane || peer.unhealthy || peer.fencing) continue;
    tally.all += 1;
    if (peer.zone === zone) tally.zone += 1;
  }
  return tally;
}
