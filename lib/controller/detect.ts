// Detection: is a node lost? From its Lease's age and its Ready condition, at a given instant.
import type { k8s } from "../kube/client.js";

export type NodeHealth =
  | { state: "healthy" }
  /** Trouble, but not for long enough to act on. */
  | { state: "suspect"; reason: string }
  | { state: "unhealthy"; reason: string };

function ms(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime();
  if (typeof value === "string") {
    const parsed = Date.parse(value);
    return Number.isFinite(parsed) ? parsed : undefined;
  }
  return undefined;
}

/**
 * Unhealthy when the Lease has not been renewed for more than `unhealthyAfterMs`, or Ready has not
 * been True for that long. A node without a Lease is judged by Ready alone.
 */
export function assessNode(
  node: k8s.V1Node,
  lease: k8s.V1Lease | undefined,
  nowMs: number,
  unhealthyAfterMs: number,
): NodeHealth {
  const renewed = ms(lease?.spec?.renewTime);
  const leaseAge = renewed === undefined ? undefined : nowMs - renewed;
  const ready = node.status?.conditions?.find((c) => c.type === "Ready");
  const notReadySince = ready && ready.status !== "True" ? ms(ready.lastTransitionTime) : undefined;
  const notReadyAge = notReadySince === undefined ? undefined : nowMs - notReadySince;
  if (leaseAge !== undefined && leaseAge > unhealthyAfterMs) {
    return { state: "unhealthy", reason: `Lease not renewed for ${Math.round(leaseAge / 1000)}s` };
  }
  if (notReadyAge !== undefined && notReadyAge > unhealthyAfterMs) {
    return {
      state: "unhealthy",
      reason: `Ready=${ready?.status ?? "?"} for ${Math.round(notReadyAge / 1000)}s`,
    };
  }
  if (notReadyAge !== undefined) return { state: "suspect", reason: `Ready=${ready?.status ?? "?"}` };
  return { state: "healthy" };
}

/**
 * Nodes that may have gone silent in the same event as `candidate` but are not judged lost yet:
 * healthy-looking nodes whose last Lease renewal is not later than the candidate's next renewal
 * would have been. Nodes lost together stop within one renewal interval of each other, so until
 * these either renew (alive after the candidate failed) or turn unhealthy, the guard would count
 * too few lost nodes and could let a zone outage be fenced node by node. With unhealthyAfter at
 * least two renewal intervals (20 s vs 10 s upstream), healthy nodes pass at once.
 */
export function possiblyLostTogether(
  candidateLease: k8s.V1Lease | undefined,
  peers: readonly { name: string; lease: k8s.V1Lease | undefined; unhealthy: boolean }[],
): string[] {
  const renewed = ms(candidateLease?.spec?.renewTime);
  const durationSeconds = candidateLease?.spec?.leaseDurationSeconds;
  if (renewed === undefined || durationSeconds === undefined) return [];
  const nextRenewalDue = renewed + (durationSeconds * 1000) / 4;
  return peers
    .filter((peer) => {
      if (peer.unhealthy) return false;
      const peerRenewed = ms(peer.lease?.spec?.renewTime);
      return peerRenewed !== undefined && peerRenewed <= nextRenewalDue;
    })
    .map((peer) => peer.name);
}
