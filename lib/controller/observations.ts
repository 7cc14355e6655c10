// The controller's own view of time on other machines. A node's Lease renewTime and its Ready
// condition's timestamps are written with the node's (or another controller's) clock, so they are
// only ever compared with their own earlier values: "did it change?". How long ago something
// happened is measured on this controller's clock, from when this controller saw it — as the node
// lifecycle controller keeps its own probe timestamps. A kubelet whose clock runs behind is then
// judged by whether it renews, not by what its clock says.
//
// Two more rules give every node a fair chance to renew before it can be judged lost:
// - Blindness: while the Lease (or Node) watch was down or stale (no event, bookmark, answered
//   WATCH or LIST for longer than watchStaleAfter: the API server paused or was down), no node
//   could renew either, or none could be seen to. Every node's clock restarts when the watch is
//   current again. A slow read is no blindness: a watch cache is read, not the API.
// - Silent together: nodes whose renewals stopped within one renewal interval of each other may
//   share one cause (a zone partition, an API outage the controller did not notice). When one of
//   them renews again, the others' clocks restart at that moment: they are likely back too and
//   about to renew.
import type { k8s } from "../kube/client.js";

export interface NodeObservation {
  /** The Node object's UID when last seen. */
  uid: string;
  /** The Lease's renewTime as last read: another machine's clock, compared only for change. */
  renewTime: string | undefined;
  /**
   * When this controller received renewTime's change (the watch event's arrival, on its monotonic
   * clock), or first saw the node, or restarted its clock.
   */
  lastSignAt: number;
  /**
   * This controller saw the Lease renewed since it first saw the node or last restarted its clock.
   * Until then the node is neither known lost nor known alive (a restarted controller, or one that
   * was blind, has no evidence either way).
   */
  seenRenewing: boolean;
  /** The node's renewal cadence (leaseDurationSeconds / 4), when its Lease says. */
  renewIntervalMs: number | undefined;
  /** Ready's status as last read. */
  ready: string | undefined;
  /** When this controller first saw Ready not True in the current spell (restarted like lastSignAt). */
  notReadySinceAt: number | undefined;
  /**
   * The node's fence driver reported its power off during a silence (early-power.ts): evidence for
   * as long as `renewTime` is still the one it was read at (a renewal ends it).
   */
  poweredOff?: PowerOffEvidence;
}

/** A power read that found a silent node off. */
export interface PowerOffEvidence {
  /** The Lease renewTime when the read started: the evidence holds while it is unchanged. */
  renewTime: string | undefined;
  /** When the read answered (this controller's monotonic clock). */
  atMs: number;
  /** The driver that read it. */
  driver: string;
}

/** The evidence of `observation`'s power read, if it still holds (no renewal since). */
export function poweredOffNow(
  observation: Readonly<NodeObservation> | undefined,
): PowerOffEvidence | undefined {
  const evidence = observation?.poweredOff;
  if (evidence === undefined || observation?.renewTime === undefined) return undefined;
  return evidence.renewTime === observation.renewTime ? evidence : undefined;
}

/**
 * How long a node may be silent before it has missed a Lease renewal: its renewal interval plus
 * the kubelet's jitter (up to 4 %, taken as 10 %) or two checks, whichever is longer.
 */
export function missedRenewalAfterMs(renewIntervalMs: number, checkIntervalMs: number): number {
  return renewIntervalMs + Math.max(renewIntervalMs / 10, 2 * checkIntervalMs);
}

/** A node seen renewing after a silence: the start and end of the silence, on this controller's clock. */
interface Return {
  node: string;
  silentSinceAt: number;
  returnedAt: number;
}

export interface ObservationOptions {
  /** Time without a sign after which a node is lost; also how long "returns" are remembered. */
  unhealthyAfterMs: number;
  /** Observation granularity (the controller's check interval), added to every "same time" window. */
  checkIntervalMs: number;
}

export interface SnapshotView {
  nodes: readonly k8s.V1Node[];
  leases: ReadonlyMap<string, k8s.V1Lease>;
  /** When each Lease's current renewTime was received (monotonic). Default: the pass's time. */
  renewedAt?: ReadonlyMap<string, number>;
}

/** What changed with a recorded snapshot (for the log). */
export interface ObservationNews {
  /** The controller was blind for this long before this pass (every node's clock restarted). */
  blindForMs?: number;
  /** Nodes seen renewing after a silence longer than their renewal cadence allows. */
  returned: string[];
}

/** The Lease's renewTime as kept here (client-node may hand it over as a Date). */
export function renewTimeOf(lease: k8s.V1Lease | undefined): string | undefined {
  const value: unknown = lease?.spec?.renewTime;
  if (value instanceof Date) return value.toISOString();
  return typeof value === "string" ? value : undefined;
}

export class NodeObservations {
  readonly #options: ObservationOptions;
  readonly #nodes = new Map<string, NodeObservation>();
  #returns: Return[] = [];
  /** A blind spell not applied yet: since when, and when it ended (undefined: at the next record). */
  #blind: { sinceAt: number; untilAt: number | undefined } | undefined;
  #recordedAtMs: number | undefined;

  constructor(options: ObservationOptions) {
    this.#options = options;
  }

  /**
   * The controller was blind from `sinceAt` (its watch's last receipt) until `untilAt` (its first
   * receipt after; undefined: still blind). The next record restarts every node's clock at the end.
   */
  recordBlind(sinceAt: number, untilAt?: number): void {
    const previous = this.#blind;
    const ends = [previous?.untilAt, untilAt].filter((t) => t !== undefined);
    this.#blind = {
      sinceAt: Math.min(previous?.sinceAt ?? sinceAt, sinceAt),
      untilAt: ends.length === 0 ? undefined : Math.max(...ends),
    };
  }

  /** When the last record was made (the pass's "now"); undefined before the first. */
  get recordedAtMs(): number | undefined {
    return this.#recordedAtMs;
  }

  /** Records the caches as a pass sees them at `nowMs`. */
  record(snapshot: SnapshotView, nowMs: number): ObservationNews {
    this.#recordedAtMs = nowMs;
    const news: ObservationNews = { returned: [] };
    const blind = this.#blind;
    this.#blind = undefined;
    const seen = new Set<string>();
    for (const node of snapshot.nodes) {
      const name = node.metadata?.name ?? "";
      seen.add(name);
      this.#recordNode(name, node, snapshot, nowMs, news);
    }
    for (const name of [...this.#nodes.keys()]) if (!seen.has(name)) this.#nodes.delete(name);
    if (blind !== undefined) {
      const endedAt = Math.min(blind.untilAt ?? nowMs, nowMs);
      news.blindForMs = endedAt - blind.sinceAt;
      for (const observation of this.#nodes.values()) this.#restart(observation, endedAt);
    }
    this.#applyReturns(nowMs);
    return news;
  }

  /** One node of a snapshot: first sight, a renewal (a return if it was silent long enough), readiness. */
  #recordNode(
    name: string,
    node: k8s.V1Node,
    snapshot: SnapshotView,
    nowMs: number,
    news: ObservationNews,
  ): void {
    const uid = node.metadata?.uid ?? "";
    const lease = snapshot.leases.get(name);
    const renewTime = renewTimeOf(lease);
    const durationSeconds = lease?.spec?.leaseDurationSeconds;
    const renewIntervalMs = durationSeconds === undefined ? undefined : (durationSeconds * 1000) / 4;
    const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status;
    const previous = this.#nodes.get(name);
    if (!previous || previous.uid !== uid) {
      // First sight (or a new Node object under this name): no history, a full unhealthyAfter.
      this.#nodes.set(name, {
        uid,
        renewTime,
        lastSignAt: nowMs,
        seenRenewing: false,
        renewIntervalMs,
        ready,
        notReadySinceAt: ready === "True" ? undefined : nowMs,
      });
      return;
    }
    if (renewTime !== previous.renewTime) {
      // Received by the watch at `at`: the silence ends there, not at this pass.
      const received = snapshot.renewedAt?.get(name) ?? nowMs;
      const at = Math.min(nowMs, Math.max(previous.lastSignAt, received));
      const silentForMs = at - previous.lastSignAt;
      if (silentForMs > this.#silenceMs(previous)) {
        this.#returns.push({ node: name, silentSinceAt: previous.lastSignAt, returnedAt: at });
        news.returned.push(name);
      }
      previous.renewTime = renewTime;
      previous.lastSignAt = at;
      previous.seenRenewing = true;
    }
    previous.renewIntervalMs = renewIntervalMs;
    if (ready === "True") previous.notReadySinceAt = undefined;
    else previous.notReadySinceAt ??= nowMs;
    previous.ready = ready;
  }

  /** The node's observation, once the node has been seen. */
  get(node: string): Readonly<NodeObservation> | undefined {
    return this.#nodes.get(node);
  }

  /**
   * Records that `node`'s driver read its power off while its Lease still had `renewTime` (ignored
   * if the node renewed or was replaced since the read started).
   */
  recordPowerOff(
    node: string,
    renewTime: string | undefined,
    evidence: Omit<PowerOffEvidence, "renewTime">,
  ): boolean {
    const observation = this.#nodes.get(node);
    if (observation === undefined || renewTime === undefined || observation.renewTime !== renewTime)
      return false;
    observation.poweredOff = { renewTime, ...evidence };
    return true;
  }

  /** Time since the node last gave a sign of life (this controller's clock). */
  silentForMs(node: string, nowMs: number): number | undefined {
    const observation = this.#nodes.get(node);
    return observation === undefined ? undefined : nowMs - observation.lastSignAt;
  }

  /** How long Ready has been seen not True, if it is not. */
  notReadyForMs(node: string, nowMs: number): number | undefined {
    const since = this.#nodes.get(node)?.notReadySinceAt;
    return since === undefined ? undefined : nowMs - since;
  }

  /** A silence longer than this is more than a late renewal: the node missed renewals. */
  #silenceMs(observation: NodeObservation): number {
    const interval = observation.renewIntervalMs ?? this.#options.unhealthyAfterMs / 2;
    return Math.max(1.5 * interval, interval + 2 * this.#options.checkIntervalMs);
  }

  /** The window within which two nodes' last renewals count as "stopped together". */
  #togetherMs(observation: NodeObservation): number {
    return (
      (observation.renewIntervalMs ?? this.#options.unhealthyAfterMs / 2) + 2 * this.#options.checkIntervalMs
    );
  }

  /** Restarts the clock of every node still silent that went silent with a node that returned. */
  #applyReturns(nowMs: number): void {
    this.#returns = this.#returns.filter((r) => nowMs - r.returnedAt <= 2 * this.#options.unhealthyAfterMs);
    if (this.#returns.length === 0) return;
    for (const [name, observation] of this.#nodes) {
      for (const r of this.#returns) {
        if (r.node === name || observation.lastSignAt >= r.returnedAt) continue;
        if (Math.abs(observation.lastSignAt - r.silentSinceAt) <= this.#togetherMs(observation)) {
          this.#restart(observation, r.returnedAt);
        }
      }
    }
  }

  #restart(observation: NodeObservation, atMs: number): void {
    if (atMs > observation.lastSignAt) observation.seenRenewing = false;
    observation.lastSignAt = Math.max(observation.lastSignAt, atMs);
    if (observation.notReadySinceAt !== undefined)
      observation.notReadySinceAt = Math.max(observation.notReadySinceAt, atMs);
  }
}
