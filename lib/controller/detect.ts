// Detection: is a node lost? From what this controller observed of its Lease and its Ready
// condition (observations.ts), on this controller's own clock.
import { missedRenewalAfterMs, poweredOffNow, type NodeObservation } from "./observations.js";

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

/** A peer as `peersSilentWith` needs it. */
export interface PeerSilenceInput {
  name: string;
  observation: Readonly<NodeObservation> | undefined;
  /** Judged lost already (or without a Lease): counted by the guard as it is. */
  unhealthy: boolean;
}

/** The peers that may have gone silent in the same event as a candidate, and what is known of them. */
export interface PeersSilentWith {
  /**
   * Silent for longer than a renewal may be late (missedRenewalAfterMs) but not judged lost yet:
   * counted as lost with the candidate, so a zone that went silent together is held at once.
   */
  overdue: string[];
  /** Not seen renewing since, and their next renewal not late yet: alive or lost, it is too soon to say. */
  due: string[];
}

/** No peer silent with a candidate (one read off, or without a Lease). */
export const NO_SILENT_PEERS: PeersSilentWith = Object.freeze({ overdue: [], due: [] });

/**
 * The peers (`peers` less the candidate itself) that may have gone silent in the same event as
 * `candidate` and are not judged lost yet: nodes whose last renewal this controller saw is not
 * later than the candidate's next renewal would have been (plus the observation granularity).
 * Nodes lost together stop within one renewal interval of each other. Of those, the ones that have
 * missed a renewal by now (`overdue`) are counted as lost at once; the others (`due`) are waited
 * for until they renew (alive after the candidate failed) or miss it. So a node lost alone waits
 * only for the peers whose renewal is due as it is judged lost (about a check interval and a
 * renewal's jitter), and a zone lost together is held as its first node is judged lost, not once
 * its last one is (up to a renewal interval later).
 */
export function peersSilentWith(
  candidateName: string,
  candidate: Readonly<NodeObservation> | undefined,
  peers: readonly PeerSilenceInput[],
  nowMs: number,
  checkIntervalMs: number,
): PeersSilentWith {
  if (candidate?.renewIntervalMs === undefined || candidate.renewTime === undefined) return NO_SILENT_PEERS;
  const nextRenewalDue = candidate.lastSignAt + candidate.renewIntervalMs + checkIntervalMs;
  const silent: PeersSilentWith = { overdue: [], due: [] };
  for (const peer of peers) {
    const o = peer.observation;
    if (
      peer.name === candidateName ||
      peer.unhealthy ||
      o?.renewTime === undefined ||
      o.lastSignAt > nextRenewalDue
    )
      continue;
    // Without a known cadence a peer cannot be said to be late: waited for until judged lost.
    const late =
      o.renewIntervalMs !== undefined &&
      nowMs - o.lastSignAt > missedRenewalAfterMs(o.renewIntervalMs, checkIntervalMs);
    (late ? silent.overdue : silent.due).push(peer.name);
  }
  return silent;
}
