// The cluster's background, counted instead of stored: the Lease renewals of nodes nothing in the
// scenario concerns, and every Node update that changed nothing the recorder names (a status
// heartbeat). At 1000 nodes renewing every 10 s that is 100 transitions a second nobody reads.
//
// Which nodes matter is not known when recording starts: the fault's nodes are named later
// (faultStarts), and a node may come to matter at any time (a pod of the scenario lands on it, it
// goes NotReady, the controller fences it). So each background node keeps its renewals of a
// recent stretch (at least its last one), and a node that comes to matter is promoted: its recent
// renewals are stored, in time order, and from then on every renewal of it is. What a derivation
// reads of a node's renewals is the last one before the fault (last-lease-renewal) and those
// shortly before a fence of it (the safety check): both within the stretch kept.
import type { Transition } from "./types.js";

/** The zone label of a Node (unlabelled nodes count under ""). */
export const ZONE_LABEL = "topology.kubernetes.io/zone";

export interface BackgroundOptions {
  /**
   * How far back each background node's renewals are kept, so a node promoted later brings them
   * along (default 120 000 ms: twice upstream's 40 s Lease and more than any profile's
   * unhealthyAfter / 2). Its last renewal is kept whatever its age.
   */
  recentMs?: number;
}

/** One zone's background in one minute. */
export interface BackgroundMinute {
  zone: string;
  /** The minute's start, epoch ms. */
  minuteAtMs: number;
  /** Lease renewals of background nodes (not stored one by one). */
  leaseRenewals: number;
  /** Node updates that changed no condition, taint or volumesInUse, of any node. */
  nodeHeartbeats: number;
}

/** One node's background, over the whole recording. */
export interface BackgroundNode {
  zone: string;
  /** Renewals counted while it was background (once promoted, its renewals are stored). */
  leaseRenewals: number;
  nodeHeartbeats: number;
  /** Its last renewal seen, epoch ms (stored or counted). */
  lastRenewalAtMs?: number;
}

export interface BackgroundCounts {
  /** Per zone and minute, in time order then zone order. */
  minutes: BackgroundMinute[];
  nodes: Record<string, BackgroundNode>;
  /** The nodes whose renewals are stored, in the order they were promoted. */
  promoted: string[];
}

const MINUTE_MS = 60_000;
const DEFAULT_RECENT_MS = 120_000;

interface Tally {
  leaseRenewals: number;
  nodeHeartbeats: number;
}

/** The classifier and counters of the file comment. */
export class Background {
  readonly #recentMs: number;
  readonly #promoted = new Set<string>();
  readonly #recent = new Map<string, Transition[]>();
  readonly #zones = new Map<string, string>();
  readonly #nodes = new Map<string, BackgroundNode>();
  /** Closed minutes by zone (key "<minute>\u0000<zone>"). */
  readonly #closed = new Map<string, BackgroundMinute>();
  /** The minute being counted, per node (folded into zones when it closes: a zone may be learnt late). */
  #openMinuteAtMs = 0;
  #open = new Map<string, Tally>();

  constructor(options: BackgroundOptions = {}) {
    this.#recentMs = options.recentMs ?? DEFAULT_RECENT_MS;
  }

  /** Whether `node`'s renewals are stored (it was promoted). */
  isPromoted(node: string): boolean {
    return this.#promoted.has(node);
  }

  /** Learns a node's zone (from its labels). */
  zone(node: string, zone: string | undefined): void {
    this.#zones.set(node, zone ?? "");
  }

  /** Counts a renewal of a background node and keeps it among its recent ones. */
  renewal(t: Transition): void {
    const node = t.node ?? "";
    const recent = this.#recent.get(node) ?? [];
    recent.push(t);
    let drop = 0;
    while (drop < recent.length - 1 && (recent[drop]?.atMs ?? 0) < t.atMs - this.#recentMs) drop += 1;
    this.#recent.set(node, drop > 0 ? recent.slice(drop) : recent);
    this.#tally(node, t.atMs).leaseRenewals += 1;
    const totals = this.#node(node);
    totals.leaseRenewals += 1;
    totals.lastRenewalAtMs = t.atMs;
  }

  /** A renewal of a promoted node: stored elsewhere, only its time noted here. */
  storedRenewal(t: Transition): void {
    this.#node(t.node ?? "").lastRenewalAtMs = t.atMs;
  }

  /** Counts a Node update that made no transition. */
  heartbeat(node: string, atMs: number): void {
    this.#tally(node, atMs).nodeHeartbeats += 1;
    this.#node(node).nodeHeartbeats += 1;
  }

  /**
   * Makes `node` matter from now on; returns its recent renewals (to be stored) the first time,
   * nothing after.
   */
  promote(node: string): Transition[] {
    if (this.#promoted.has(node)) return [];
    this.#promoted.add(node);
    const recent = this.#recent.get(node) ?? [];
    this.#recent.delete(node);
    return recent;
  }

  /** The counts so far (the minute under way included). */
  counts(): BackgroundCounts {
    const minutes = new Map(this.#closed);
    this.#fold(minutes, this.#openMinuteAtMs, this.#open);
    const nodes: Record<string, BackgroundNode> = {};
    for (const [name, node] of [...this.#nodes].sort(([a], [b]) => a.localeCompare(b))) {
      nodes[name] = { ...node, zone: this.#zones.get(name) ?? "" };
    }
    return {
      minutes: [...minutes.values()].sort(
        (a, b) => a.minuteAtMs - b.minuteAtMs || a.zone.localeCompare(b.zone),
      ),
      nodes,
      promoted: [...this.#promoted],
    };
  }

  /** How many renewals are kept aside for background nodes (bounded by nodes × recentMs / interval). */
  get keptRenewals(): number {
    let kept = 0;
    for (const recent of this.#recent.values()) kept += recent.length;
    return kept;
  }

  #node(node: string): BackgroundNode {
    let totals = this.#nodes.get(node);
    if (totals === undefined) {
      totals = { zone: "", leaseRenewals: 0, nodeHeartbeats: 0 };
      this.#nodes.set(node, totals);
    }
    return totals;
  }

  /** The node's tally in the minute of `atMs` (a change of minute closes the open one). */
  #tally(node: string, atMs: number): Tally {
    const minuteAtMs = Math.floor(atMs / MINUTE_MS) * MINUTE_MS;
    if (minuteAtMs > this.#openMinuteAtMs) {
      this.#fold(this.#closed, this.#openMinuteAtMs, this.#open);
      this.#openMinuteAtMs = minuteAtMs;
      this.#open = new Map();
    }
    let tally = this.#open.get(node);
    if (tally === undefined) {
      tally = { leaseRenewals: 0, nodeHeartbeats: 0 };
      this.#open.set(node, tally);
    }
    return tally;
  }

  #fold(into: Map<string, BackgroundMinute>, minuteAtMs: number, open: ReadonlyMap<string, Tally>): void {
    for (const [node, tally] of open) {
      const zone = this.#zones.get(node) ?? "";
      const key = `${minuteAtMs}\u0000${zone}`;
      const previous = into.get(key);
      into.set(key, {
        zone,
        minuteAtMs,
        leaseRenewals: (previous?.leaseRenewals ?? 0) + tally.leaseRenewals,
        nodeHeartbeats: (previous?.nodeHeartbeats ?? 0) + tally.nodeHeartbeats,
      });
    }
  }
}
