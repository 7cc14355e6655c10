// Leader election over a coordination.k8s.io Lease: one active controller, others wait; a crashed
// leader's Lease expires and the next replica takes over (and resumes from the NodeFences).
import { errorMessage } from "../errors.js";
import { k8s, isConflict, isNotFound } from "../kube/client.js";

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
    const name = this.#options.name ?? "rekindle-controller";
    const durationMs = this.#options.leaseDurationMs ?? 15_000;
    const now = new Date((this.#options.now ?? Date.now)());
    const api = kc.makeApiClient(k8s.CoordinationV1Api);
    const was = this.#leader;
    try {
      let lease: k8s.V1Lease;
      try {
        lease = await api.readNamespacedLease({ name, namespace });
      } catch (error) {
        if (!isNotFound(error)) throw error;
        await api.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: Math.ceil(durationMs / 1000),
              acquireTime: now,
              renewTime: now,
              leaseTransitions: 0,
            },
          },
        });
        return this.#set(true, was);
      }
      const spec = lease.spec ?? {};
      const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
      const expired =
        now.getTime() - renewed > (spec.leaseDurationSeconds ?? Math.ceil(durationMs / 1000)) * 1000;
      const mine = spec.holderIdentity === identity;
      if (!mine && !expired && spec.holderIdentity) return this.#set(false, was);
      // Optimistic concurrency: the resourceVersion in `lease` makes a racing replace fail with 409.
      await api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          ...lease,
          spec: {
            ...spec,
            holderIdentity: identity,
            leaseDurationSeconds: Math.ceil(durationMs / 1000),
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
