// Leader election over a coordination.k8s.io Lease: one active controller, others wait; a crashed
// leader's Lease expires and the next replica takes over (and resumes from the NodeFences).
//
// As client-go's leaderelection: the Lease is renewed on its own timer (a slow reconcile pass or a
// hanging fence driver cannot starve it); a leader that has not renewed for `renewDeadlineMs` stops
// acting at once (its term signal aborts, cancelling driver calls in flight) before any standby can
// take over; and a standby judges the Lease expired by how long *it* has seen the Lease unchanged,
// never by comparing the holder's renewTime with its own clock (replica clock skew cannot make a
// live Lease look expired).
import { errorMessage, RekindleError } from "../errors.js";
import { boundedKubeConfig } from "../kube/bounded-client.js";
import { k8s, isConflict, isNotFound } from "../kube/client.js";
import { clockFrom, type Clock } from "../util/clock.js";
import { sleep } from "../util/time.js";
import { formatMicroTime } from "../kube/micro-time.js";

/** The leader election Lease's name unless options.name says otherwise. */
export const DEFAULT_LEADER_LEASE = "rekindle-controller";

export interface LeaderElectionOptions {
  kc: k8s.KubeConfig;
  namespace: string;
  /** Lease name. Default "rekindle-controller". */
  name?: string;
  identity: string;
  /** A Lease seen unchanged for this long is taken over. Default 15 000 ms. */
  leaseDurationMs?: number;
  /** A leader that could not renew for this long steps down. Default two thirds of leaseDurationMs. */
  renewDeadlineMs?: number;
  /** How often the Lease is renewed or watched for expiry. Default a fifth of leaseDurationMs. */
  retryPeriodMs?: number;
  /**
   * Injectable clock (ms) for durations and renewTime alike (tests). Default: durations on the
   * monotonic clock, renewTime from the wall clock (lib/util/clock.ts).
   */
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

export class LeaderElector {
  readonly #options: LeaderElectionOptions;
  readonly #clock: Clock;
  /** The Lease's API calls each end within a retry period (the next attempt is due then), or at stop(). */
  readonly #kc: k8s.KubeConfig;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  /** The current term's signal: aborted when leadership ends. */
  #term: AbortController | undefined;
  /** When this replica last renewed successfully (its own clock). */
  #renewedAt = 0;
  /** The Lease record as last read, and when this replica first saw it so (its own clock). */
  #observed: { record: string; atMs: number } | undefined;
  /** Ends the term when no renewal succeeded within the renew deadline (a renewal may hang). */
  #deadline: NodeJS.Timeout | undefined;
  #loop: Promise<void> | undefined;
  #stop: AbortController | undefined;

  constructor(options: LeaderElectionOptions) {
    this.#options = options;
    this.#clock = clockFrom(options.now);
    this.#kc = boundedKubeConfig(options.kc, {
      timeoutMs: () => this.#retryPeriodMs,
      signal: () => this.#stop?.signal ?? new AbortController().signal,
    });
    this.#leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? Math.round((this.#leaseDurationMs * 2) / 3);
    this.#retryPeriodMs = options.retryPeriodMs ?? Math.round(this.#leaseDurationMs / 5);
    if (!(this.#retryPeriodMs < this.#renewDeadlineMs && this.#renewDeadlineMs < this.#leaseDurationMs)) {
      throw new RekindleError(
        "INVALID_INPUT",
        `leader election needs retryPeriod < renewDeadline < leaseDuration (got ${this.#retryPeriodMs}, ${this.#renewDeadlineMs}, ${this.#leaseDurationMs} ms)`,
      );
    }
  }

  /** This replica's monotonic clock: every duration here is measured on it. */
  #now(): number {
    return this.#clock.monotonicMs();
  }

  /** Leading now: holding the Lease and renewed within the renew deadline. */
  get isLeader(): boolean {
    return this.#term !== undefined && this.#now() - this.#renewedAt < this.#renewDeadlineMs;
  }

  /** The current term's signal (aborted when it ends), or an aborted signal when not leading. */
  get signal(): AbortSignal {
    return this.isLeader && this.#term ? this.#term.signal : AbortSignal.abort(new Error("not the leader"));
  }

  /**
   * How long an action started now may take and still end before any standby could take over:
   * a standby waits a whole leaseDuration after it last saw this replica's renewal.
   */
  safeActionMs(): number {
    return Math.max(0, this.#renewedAt + this.#leaseDurationMs - this.#retryPeriodMs - this.#now());
  }

  /** Renews (or tries to acquire) the Lease every retryPeriod until `stop()`. */
  start(): void {
    if (this.#loop) return;
    const stop = new AbortController();
    this.#stop = stop;
    this.#loop = (async () => {
      while (!stop.signal.aborted) {
        await this.tryAcquireOrRenew();
        try {
          await sleep(this.#retryPeriodMs, stop.signal);
        } catch {
          break;
        }
      }
    })();
  }

  /** Stops renewing and ends the term. The Lease is not released: a standby takes over once it expires. */
  async stop(): Promise<void> {
    this.#stop?.abort();
    await this.#loop;
    this.#loop = undefined;
    this.#endTerm("stopped");
  }

  /** Acquires or renews the Lease once; returns whether this replica leads now. Never throws. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, identity } = this.#options;
    const kc = this.#kc;
    const name = this.#options.name ?? DEFAULT_LEADER_LEASE;
    const durationSeconds = Math.ceil(this.#leaseDurationMs / 1000);
    const startedAt = this.#now();
    const now = formatMicroTime(this.#clock.wallMs());
    // Leases go through the generic object endpoints as plain JSON: client-node's typed Lease API
    // writes millisecond timestamps, which the apiserver refuses for MicroTime fields.
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    const ref = { group: "coordination.k8s.io", version: "v1", namespace, plural: "leases" };
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
        return this.#renewed(startedAt);
      }
      const spec = lease.spec ?? {};
      const mine = spec.holderIdentity === identity;
      if (!mine && spec.holderIdentity && !this.#expired(lease))
        return this.#lost("another replica holds it");
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
      return this.#renewed(startedAt);
    } catch (error) {
      if (!isConflict(error) && this.#stop?.signal.aborted !== true) {
        this.#options.log?.(`leader election: ${errorMessage(error)}`);
      }
      // A failed renewal is not yet a lost term: the renew deadline decides.
      if (this.#term && this.isLeader) return true;
      return this.#lost("renewal failed");
    }
  }

  /** Expired: the holder's record has not changed for a whole leaseDuration, as this replica saw it. */
  #expired(lease: LeaseJson): boolean {
    const record = `${lease.spec?.holderIdentity ?? ""}|${lease.spec?.renewTime ?? ""}`;
    const nowMs = this.#now();
    if (this.#observed?.record !== record) this.#observed = { record, atMs: nowMs };
    const durationMs = (lease.spec?.leaseDurationSeconds ?? this.#leaseDurationMs / 1000) * 1000;
    return nowMs - this.#observed.atMs > durationMs;
  }

  #renewed(startedAt: number): boolean {
    // The renewal counts from when it was sent: the Lease may have been written any time after.
    this.#renewedAt = startedAt;
    this.#observed = undefined;
    clearTimeout(this.#deadline);
    this.#deadline = setTimeout(
      () => {
        this.#endTerm("no renewal within the renew deadline");
      },
      Math.max(0, startedAt + this.#renewDeadlineMs - this.#now()),
    );
    this.#deadline.unref();
    if (!this.#term) {
      this.#term = new AbortController();
      this.#options.log?.(`${this.#options.identity} is the leader`);
    }
    return true;
  }

  #lost(why: string): boolean {
    this.#endTerm(why);
    return false;
  }

  #endTerm(why: string): void {
    clearTimeout(this.#deadline);
    if (!this.#term) return;
    this.#term.abort(new Error(`leadership lost: ${why}`));
    this.#term = undefined;
    this.#options.log?.(`${this.#options.identity} is not the leader (${why})`);
  }
}
