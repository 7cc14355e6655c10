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
  const all = counts.all;
  const clusterBudget = unhealthyBudget(input.maxUnhealthy, all.nodes);
  const clusterTroubled = all.troubled + self;
  if (clusterTroubled > clusterBudget) {
    return {
      allowed: false,
      reason: "ClusterBudget",
      message: `${clusterTroubled} of ${all.nodes} nodes unhealthy or fencing; maxUnhealthy ${input.maxUnhealthy} allows ${clusterBudget}`,
    };
  }
  const zone = counts.zones.get(node.zone) ?? { nodes: 0, troubled: 0 };
  const zoneBudget = unhealthyBudget(input.maxUnhealthy, zone.nodes);
  const zoneTroubled = zone.troubled + self;
  if (zoneTroubled > zoneBudget) {
    return {
      allowed: false,
      reason: "ZoneBudget",
      message: `${zoneTroubled} of ${zone.nodes} nodes in zone ${node.zone} unhealthy or fencing; maxUnhealthy ${input.maxUnhealthy} allows ${zoneBudget}`,
    };
  }
  return { allowed: true };
}
