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
