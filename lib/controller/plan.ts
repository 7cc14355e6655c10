// The policy of one reconcile pass, pure: each node's health, the guard's view of all nodes, and
// what to do about one node (release or supersede a fence, carry on with it, wait for its peers,
// hold, fence, or nothing). Past the guard, the fleet's view decides (fleet.ts): a node silent
// together with others is held, and each fence counts against a fleet-wide rate.
import type { ControllerConfig } from "./config.js";
import {
  assessNode,
  NO_SILENT_PEERS,
  peersSilentWith,
  type NodeHealth,
  type PeerSilenceInput,
  type PeersSilentWith,
} from "./detect.js";
import { fenceOwnsNode, isFinished, type NodeFence } from "./fence-state.js";
import type { FenceRateClass } from "./fence-rate.js";
import { fleetDecision, type FleetHoldReason, type FleetSettings, type FleetView } from "./fleet.js";
import { guardDecision, type GuardHoldReason, type GuardNode } from "./guard.js";
import { parseNodeSelector } from "./node-selector.js";
import { isControlPlaneNode, ZONE_LABEL } from "../kube/queries.js";
import type { NodeObservations } from "./observations.js";
import type { Snapshot } from "./snapshot.js";

export type NodePlan =
  /** The NodeFence is being deleted (by hand): lift what it put on the node, then let it go. */
  | { kind: "release"; fence: NodeFence }
  /** The NodeFence belongs to an earlier Node object of this name (re-registered): end it untouched. */
  | { kind: "supersede"; fence: NodeFence }
  /** A fence is under way: take its next step. */
  | { kind: "progress"; fence: NodeFence; health: NodeHealth }
  /**
   * Lost, but other nodes went silent with it whose next renewal is due: the guard's and the
   * fleet's decision depend on whether they renew.
   */
  | { kind: "wait-for-peers"; waiting: string[] }
  /** Lost, and the guard says not now. */
  | { kind: "hold"; reason: GuardHoldReason | FleetHoldReason; message: string; lostBecause: string }
  /**
   * Lost, and the guard allows a fence (if the node holds anything to release), counted against
   * the fleet-wide rate `rate` (fence-rate.ts).
   */
  | { kind: "fence"; lostBecause: string; previous: NodeFence | undefined; rate: FenceRateClass }
  /** Not lost (healthy, or suspect for too short a time). */
  | { kind: "none"; healthy: boolean };

// Most nodes' plan in every pass: shared, not made anew per node and pass.
const NONE_HEALTHY: NodePlan = Object.freeze({ kind: "none", healthy: true });
const NONE_SUSPECT: NodePlan = Object.freeze({ kind: "none", healthy: false });
const nonePlan = (healthy: boolean): NodePlan => (healthy ? NONE_HEALTHY : NONE_SUSPECT);

function nodeName(node: { metadata?: { name?: string } }): string {
  return node.metadata?.name ?? "";
}

/** Each snapshot's nodes by name, built once: a pass plans every node, so a linear lookup is quadratic. */
const nodesByName = new WeakMap<Snapshot["nodes"], Map<string, Snapshot["nodes"][number]>>();

function nodeNamed(snapshot: Pick<Snapshot, "nodes">, name: string): Snapshot["nodes"][number] | undefined {
  let byName = nodesByName.get(snapshot.nodes);
  if (byName === undefined) {
    byName = new Map(snapshot.nodes.map((n) => [nodeName(n), n]));
    nodesByName.set(snapshot.nodes, byName);
  }
  return byName.get(name);
}

export function assessNodes(
  snapshot: Pick<Snapshot, "nodes">,
  observations: NodeObservations,
  nowMs: number,
  unhealthyAfterMs: number,
): Map<string, NodeHealth> {
  const health = new Map<string, NodeHealth>();
  for (const node of snapshot.nodes) {
    const name = nodeName(node);
    health.set(name, assessNode(observations.get(name), nowMs, unhealthyAfterMs));
  }
  return health;
}

export function guardNodes(
  snapshot: Snapshot,
  health: ReadonlyMap<string, NodeHealth>,
  excludeLabel: string,
  nodeSelector: string = "",
): readonly GuardNode[] {
  const selector = parseNodeSelector(nodeSelector);
  // Frozen: the guard counts a frozen view once for the whole pass (guard.ts).
  const view = snapshot.nodes.map((node): GuardNode => {
    const name = nodeName(node);
    const fence = snapshot.fences.get(name);
    return Object.freeze({
      name,
      zone: node.metadata?.labels?.[ZONE_LABEL] ?? "",
      controlPlane: isControlPlaneNode(node),
      excluded: node.metadata?.labels?.[excludeLabel] !== undefined,
      unselected: !selector.matches(node.metadata?.labels),
      unhealthy: health.get(name)?.state === "unhealthy",
      fencing: fence !== undefined && !isFinished(fence.status) && fenceOwnsNode(fence, node),
    });
  });
  return Object.freeze(view);
}

/**
 * What to do about node `name` in this pass. `guard` must already count fences started this pass.
 * Without `fleet` (the pass's fleet view and its settings) every allowed fence is at the primary rate.
 */
export function planNode(
  name: string,
  snapshot: Snapshot,
  observations: NodeObservations,
  health: ReadonlyMap<string, NodeHealth>,
  guard: readonly GuardNode[],
  config: Pick<ControllerConfig, "maxUnhealthy" | "checkIntervalMs">,
  fleet?: { view: FleetView; settings: FleetSettings },
): NodePlan {
  const nodeHealth = health.get(name) ?? { state: "healthy" };
  const node = nodeNamed(snapshot, name);
  const fence = snapshot.fences.get(name);
  if (fence?.metadata.deletionTimestamp) return { kind: "release", fence };
  if (fence && node && !fenceOwnsNode(fence, node) && !isFinished(fence.status)) {
    return { kind: "supersede", fence };
  }
  if (fence && !isFinished(fence.status)) return { kind: "progress", fence, health: nodeHealth };
  if (nodeHealth.state !== "unhealthy") return nonePlan(nodeHealth.state === "healthy");
  // Nodes lost together are counted together: peers silent with it that missed a renewal count as
  // lost at once (a zone is held as its first node is judged lost), and peers whose renewal is due
  // are waited for unless the decision is a hold anyway. A node read off is fenced as it is read
  // (its fence powers nothing off), each counted by the guard as it comes.
  const poweredOff = nodeHealth.poweredOff === true;
  const peers = poweredOff
    ? NO_SILENT_PEERS
    : silentPeersOf(name, observations, guard, config.checkIntervalMs);
  const decision = guardDecision(name, {
    nodes: guard,
    maxUnhealthy: config.maxUnhealthy,
    paused: snapshot.paused,
    silentWith: peers.overdue,
  });
  if (!decision.allowed) {
    return {
      kind: "hold",
      reason: decision.reason,
      message: decision.message,
      lostBecause: nodeHealth.reason,
    };
  }
  const mass = fleet
    ? fleetDecision(name, fleet.view, fleet.settings, poweredOff, new Set(peers.overdue))
    : undefined;
  if (mass?.allowed === false) {
    return { kind: "hold", reason: mass.reason, message: mass.message, lostBecause: nodeHealth.reason };
  }
  if (peers.due.length > 0) return { kind: "wait-for-peers", waiting: peers.due };
  const rate = mass?.rate ?? (poweredOff ? "unmetered" : "primary");
  return { kind: "fence", lostBecause: nodeHealth.reason, previous: fence, rate };
}

/** Each guard view's workers as `peersSilentWith` reads them, built once per pass, not per lost node. */
const peersByView = new WeakMap<readonly GuardNode[], PeerSilenceInput[]>();

/** `peersSilentWith` over the pass's workers, at the time of the pass's record. */
function silentPeersOf(
  name: string,
  observations: NodeObservations,
  guard: readonly GuardNode[],
  checkIntervalMs: number,
): PeersSilentWith {
  // Never recorded (no pass yet): no peer can be said to be late, so every peer in the window is due.
  const nowMs = observations.recordedAtMs ?? -Infinity;
  let peers = peersByView.get(guard);
  if (peers === undefined) {
    peers = guard
      .filter((g) => !g.controlPlane)
      .map((g) => ({ name: g.name, observation: observations.get(g.name), unhealthy: g.unhealthy }));
    // Only a frozen view (guardNodes') is the pass's own; any other is read anew.
    if (Object.isFrozen(guard)) peersByView.set(guard, peers);
  }
  return peersSilentWith(name, observations.get(name), peers, nowMs, checkIntervalMs);
}
