// Leader election over a coordination.k8s.io Lease: one active controller, others wait; a crashed
// leader's Lease expires and the next replica takes over (and resumes from the NodeFences).
import { errorMessage } from "../errors.js";
import { k8s, isConflict, isNotFound } from "../kube/client.js";

/** The leader election Lease's name unless options.name says otherwise. */
export const DEFAULT_LEADER_LEASE = "rekindle-controller";

export interface LeaderElectionOptions {
  kc: k8s.KubeConfig;
  namespace: string;
  /** Lease name. Default "rekindle-controller". */
  name?: string;
  identity: string;
  /** A leader that has not renewed for this long is replaced. Default 15 000 ms. */
  leaseDurationMs?: number;
  now?: () => number;
  log?: (message: string) => void;
}

interface LeaseJson {
  metadata?: { resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    renewTime?: string;
    acquireTime?: string;
    leaseTransitions?: number;
  };
}

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export class LeaderElector {
  readonly #options: LeaderElectionOptions;
  #leader = false;

  constructor(options: LeaderElectionOptions) {
    this.#options = options;
  }

  get isLeader(): boolean {
    return this.#leader;
  }

  /** Acquires or renews the Lease; returns whether this replica leads now. Never throws. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { kc, namespace, identity } = this.#options;
    const name = this.#options.name ?? DEFAULT_LEADER_LEASE;
    const durationSeconds = Math.ceil((this.#options.leaseDurationMs ?? 15_000) / 1000);
    const nowMs = (this.#options.now ?? Date.now)();
    const now = microTime(nowMs);
    // Leases go through the generic object endpoints as plain JSON: client-node's typed Lease API
    // writes millisecond timestamps, which the apiserver refuses for MicroTime fields.
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    const ref = { group: "coordination.k8s.io", version: "v1", namespace, plural: "leases" };
    const was = this.#leader;
    try {
      let lease: LeaseJson;
      try {
        lease = (await api.getNamespacedCustomObject({ ...ref, name })) as LeaseJson;
      } catch (error) {
        if (!isNotFound(error)) throw error;
        await api.createNamespacedCustomObject({
          ...ref,
          body: {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: now,
              renewTime: now,
              leaseTransitions: 0,
            },
          },
        });
        return this.#set(true, was);
      }
      const spec = lease.spec ?? {};
      const renewed = spec.renewTime ? Date.parse(spec.renewTime) : 0;
      const expired = nowMs - renewed > (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
      const mine = spec.holderIdentity === identity;
      if (!mine && !expired && spec.holderIdentity) return this.#set(false, was);
      // Optimistic concurrency: the resourceVersion carried in `lease` makes a racing replace fail with 409.
      await api.replaceNamespacedCustomObject({
        ...ref,
        name,
        body: {
          ...lease,
          spec: {
            ...spec,
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            renewTime: now,
            ...(mine ? {} : { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
          },
        },
      });
      return this.#set(true, was);
    } catch (error) {
      if (!isConflict(error)) this.#options.log?.(`leader election: ${errorMessage(error)}`);
      return this.#set(false, was);
    }
  }

  #set(leader: boolean, was: boolean): boolean {
    this.#leader = leader;
    if (leader !== was)
      this.#options.log?.(
        leader ? `${this.#options.identity} is the leader` : `${this.#options.identity} is not the leader`,
      );
    return leader;
  }
}
