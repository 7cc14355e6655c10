// Detection: is a node lost? From what this controller observed of its Lease and its Ready
// condition (observations.ts), on this controller's own clock.
import { poweredOffNow, type NodeObservation } from "./observations.js";

export type NodeHealth =
  /** Seen renewing its Lease (or, without a Lease, Ready), and Ready. */
  | { state: "healthy" }
  /** Seen renewing, but Ready is not True: alive, in trouble not long enough to act on. */
  | { state: "suspect"; reason: string }
  /**
   * Not seen renewing since this controller first saw it or restarted its clock (after a restart,
   * blindness, or a peer's return), and not silent long enough to be lost: no evidence either way.
   */
  | { state: "unobserved"; reason: string }
  /** `poweredOff`: lost because its fence driver read it off during a silence (early-power.ts). */
  | { state: "unhealthy"; reason: string; poweredOff?: true };

/**
 * Unhealthy when this controller has seen no Lease renewal for more than `unhealthyAfterMs`. A node
 * that renews is reachable and never lost, whatever its Ready condition says: Ready=Unknown is the
 * node lifecycle controller's own guess (it stops counting renewals whose renewTime goes backwards,
 * as after a kubelet clock step) and Ready=False is the kubelet itself speaking. Such a node is
 * "suspect". Only a node without a Lease is judged by Ready (not True for that long). A node not
 * observed at all is healthy (nothing will act on it before it is observed). A node whose fence
 * driver read its power off after it missed a renewal (and that has not renewed since) is lost at
 * once: a node that is off runs nothing (early-power.ts).
 */
export function assessNode(
  observation: Readonly<NodeObservation> | undefined,
  nowMs: number,
  unhealthyAfterMs: number,
): NodeHealth {
  if (!observation) return { state: "healthy" };
  const hasLease = observation.renewTime !== undefined;
  const silentForMs = hasLease ? nowMs - observation.lastSignAt : undefined;
  const notReadyForMs =
    observation.notReadySinceAt === undefined ? undefined : nowMs - observation.notReadySinceAt;
  const off = poweredOffNow(observation);
  if (off !== undefined && silentForMs !== undefined) {
    return {
      state: "unhealthy",
      reason: `Lease not renewed for ${Math.round(silentForMs / 1000)}s and ${off.driver} reports its power off`,
      poweredOff: true,
    };
  }
  if (silentForMs !== undefined && silentForMs > unhealthyAfterMs) {
    return { state: "unhealthy", reason: `Lease not renewed for ${Math.round(silentForMs / 1000)}s` };
  }
  if (!hasLease && notReadyForMs !== undefined && notReadyForMs > unhealthyAfterMs) {
    return {
      state: "unhealthy",
      reason: `no Lease, and Ready=${observation.ready ?? "?"} for ${Math.round(notReadyForMs / 1000)}s`,
    };
  }
  if (hasLease && !observation.seenRenewing) {
    return { state: "unobserved", reason: "not seen renewing its Lease yet" };
  }
  if (notReadyForMs !== undefined) return { state: "suspect", reason: `Ready=${observation.ready ?? "?"}` };
  return { state: "healthy" };
}

/**
 * Nodes that may have gone silent in the same event as `candidate` but are not judged lost yet:
 * healthy-looking nodes whose last renewal this controller saw is not later than the candidate's
 * next renewal would have been (plus the observation granularity). Nodes lost together stop within
 * one renewal interval of each other, so until these either renew (alive after the candidate
 * failed) or turn unhealthy, the guard would count too few lost nodes and could let a zone outage
 * be fenced node by node. With unhealthyAfter at least two renewal intervals (20 s vs 10 s
 * upstream), healthy nodes pass at once.
 */
export function possiblyLostTogether(
  candidate: Readonly<NodeObservation> | undefined,
  peers: readonly { name: string; observation: Readonly<NodeObservation> | undefined; unhealthy: boolean }[],
  checkIntervalMs: number,
): string[] {
  if (candidate?.renewIntervalMs === undefined || candidate.renewTime === undefined) return [];
  const nextRenewalDue = candidate.lastSignAt + candidate.renewIntervalMs + checkIntervalMs;
  return peers
    .filter((peer) => {
      if (peer.unhealthy || peer.observation?.renewTime === undefined) return false;
      return peer.observation.lastSignAt <= nextRenewalDue;
    })
    .map((peer) => peer.name);
}
