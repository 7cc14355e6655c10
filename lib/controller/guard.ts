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

/** May `candidate` be fenced now? Counts nodes unhealthy or being fenced, the candidate included. */
export function guardDecision(candidate: string, input: GuardInput): GuardDecision {
  const node = input.nodes.find((n) => n.name === candidate);
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
  const troubled = (n: GuardNode) => n.unhealthy || n.fencing || n.name === candidate;
  const all = input.nodes.filter((n) => !n.controlPlane);
  const clusterBudget = unhealthyBudget(input.maxUnhealthy, all.length);
  const clusterTroubled = all.filter(troubled).length;
  if (clusterTroubled > clusterBudget) {
    return {
      allowed: false,
      reason: "ClusterBudget",
      message: `${clusterTroubled} of ${all.length} nodes unhealthy or fencing; maxUnhealthy ${input.maxUnhealthy} allows ${clusterBudget}`,
    };
  }
  const zone = all.filter((n) => n.zone === node.zone);
  const zoneBudget = unhealthyBudget(input.maxUnhealthy, zone.length);
  const zoneTroubled = zone.filter(troubled).length;
  if (zoneTroubled > zoneBudget) {
    return {
      allowed: false,
      reason: "ZoneBudget",
      message: `${zoneTroubled} of ${zone.length} nodes in zone ${node.zone} unhealthy or fencing; maxUnhealthy ${input.maxUnhealthy} allows ${zoneBudget}`,
    };
  }
  return { allowed: true };
}
