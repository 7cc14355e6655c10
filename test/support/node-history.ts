// A scripted history of node heartbeats for the controller's observation tests: nodes renew their
// Lease every `renewEveryMs` of their own life; the controller (NodeObservations) reads a snapshot
// every `tickMs`. Times are the controller's clock; a node's clock may be skewed.
import type { k8s } from "../../lib/kube/client.js";
import { NodeObservations, type ObservationOptions } from "../../lib/controller/observations.js";

export interface ScriptedNode {
  name: string;
  zone?: string;
  /** The node renews at every multiple of renewEveryMs while alive(t) (controller time). */
  alive: (t: number) => boolean;
  /** The node's clock minus the controller's (negative: runs behind). Default 0. */
  skewMs?: number;
  /** Offset of its renewals from the start of the history. Default 0. */
  phaseMs?: number;
  uid?: string;
  ready?: "True" | "False" | "Unknown";
}

export const LEASE_SECONDS = 40;
export const RENEW_EVERY_MS = (LEASE_SECONDS * 1000) / 4;

export function nodeObject(n: ScriptedNode): k8s.V1Node {
  return {
    metadata: {
      name: n.name,
      uid: n.uid ?? `uid-${n.name}`,
      labels: { "topology.kubernetes.io/zone": n.zone ?? "z" },
    },
    status: { conditions: [{ type: "Ready", status: n.ready ?? "True" }] },
  };
}

/** The Lease as the node last wrote it at or before `t`, or undefined before its first renewal. */
function leaseAt(n: ScriptedNode, t: number, from: number): k8s.V1Lease | undefined {
  let last: number | undefined;
  for (let r = from + (n.phaseMs ?? 0); r <= t; r += RENEW_EVERY_MS) if (n.alive(r)) last = r;
  if (last === undefined) return undefined;
  return {
    metadata: { name: n.name },
    spec: { renewTime: new Date(last + (n.skewMs ?? 0)), leaseDurationSeconds: LEASE_SECONDS },
  };
}

export function snapshotAt(nodes: readonly ScriptedNode[], t: number, from: number) {
  const leases = new Map<string, k8s.V1Lease>();
  for (const n of nodes) {
    const lease = leaseAt(n, t, from);
    if (lease) leases.set(n.name, lease);
  }
  return { nodes: nodes.map(nodeObject), leases };
}

/**
 * Feeds the observations one pass every tickMs from `from` to `to` (inclusive), each seeing the
 * Leases as a watch cache holds them then (a renewal received when it was written). `blind` marks
 * ticks at which the watch is stale (the pass sees nothing), `blindSpell` a spell a tick's pass
 * learns of (the watch was stale from then until this tick).
 */
export function replay(
  observations: NodeObservations,
  nodes: readonly ScriptedNode[],
  options: {
    from: number;
    /** When the nodes' renewal schedule starts. Default `from`. */
    origin?: number;
    to: number;
    tickMs?: number;
    /** The watch is stale at this tick (blind since the tick before). */
    blind?: (t: number) => boolean;
    /** No pass at this tick. */
    skip?: (t: number) => boolean;
    /** The pass at this tick learns the watch was stale from this time until now. */
    blindSpellSince?: (t: number) => number | undefined;
  },
): void {
  const tick = options.tickMs ?? 1_000;
  for (let t = options.from; t <= options.to; t += tick) {
    if (options.blind?.(t)) {
      observations.recordBlind(t - tick);
      continue;
    }
    if (options.skip?.(t)) continue;
    const since = options.blindSpellSince?.(t);
    if (since !== undefined) observations.recordBlind(since, t);
    observations.record(snapshotAt(nodes, t, options.origin ?? options.from), t);
  }
}

export function observations(options: Partial<ObservationOptions> = {}): NodeObservations {
  return new NodeObservations({
    unhealthyAfterMs: 20_000,
    checkIntervalMs: 1_000,
    ...options,
  });
}
