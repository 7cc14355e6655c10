// A sim node's Lease renewed by the sim itself, at the kubelet's cadence, while its kwok is silent:
// during a graceful shutdown the kubelet goes on renewing until its pods have ended and the
// machine powers off (issue 23), and the node lifecycle controller's grace runs from the last
// renewal. kwok cannot play that part: left running it would also report the node Ready again.
// The renewal is written as an admin, so a skewed clock (hostile/clock-skew.ts) does not shift it.
import { isNotFound, k8s } from "../../../kube/client.js";
import { sleep } from "../../../util/time.js";
import { leaseRenewIntervalMs } from "../../profiles.js";
import { formatMicroTime } from "../../../kube/micro-time.js";

const NODE_LEASE_NAMESPACE = "kube-node-lease";

/** When the next renewal is due: one interval after the last, and not before `nowMs`. */
export function nextRenewalAtMs(lastRenewalMs: number, intervalMs: number, nowMs: number): number {
  return Math.max(lastRenewalMs + intervalMs, nowMs);
}

/**
 * Renews `nodeName`'s Lease whenever a renewal is due, from its last renewTime, until `signal`
 * aborts; resolves then, with how many renewals it wrote. A node without a Lease has nothing to
 * renew (resolves at once). API errors end the renewals and are thrown: the node then looks silent
 * from its last renewal, as a kubelet that could not reach the API server does.
 */
export async function renewNodeLeaseUntil(
  kc: k8s.KubeConfig,
  nodeName: string,
  signal: AbortSignal,
): Promise<number> {
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  let renewals = 0;
  while (!signal.aborted) {
    let lease: k8s.V1Lease;
    try {
      lease = await coordination.readNamespacedLease({ name: nodeName, namespace: NODE_LEASE_NAMESPACE });
    } catch (error) {
      if (isNotFound(error)) return renewals;
      throw error;
    }
    const interval = leaseRenewIntervalMs({
      nodeLeaseDurationSeconds: lease.spec?.leaseDurationSeconds ?? 40,
    });
    const last = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : Date.now();
    const wait = nextRenewalAtMs(last, interval, Date.now()) - Date.now();
    try {
      await sleep(wait, signal);
    } catch {
      return renewals; // Aborted: the node powers off now.
    }
    // A merge patch carrying MicroTime as the apiserver writes it (client-node's Date would be refused).
    await coordination.patchNamespacedLease(
      {
        name: nodeName,
        namespace: NODE_LEASE_NAMESPACE,
        body: { spec: { renewTime: formatMicroTime(Date.now()) } },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    renewals += 1;
  }
  return renewals;
}
