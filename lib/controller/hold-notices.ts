// What the controller says about lost nodes it does not fence, said once, not on every pass: each
// hold once per reason (a log line, the hold counter and an Event), and "nothing to release" once
// per outage. Events are written in the background (BackgroundTasks): a pass that holds a zone's
// worth of nodes does not wait for hundreds of Event writes before it decides for the next node.
import type { BackgroundTasks } from "../util/bounded-parallel.js";
import type { ActionContext } from "./action-context.js";
import { EVENT_REASONS, type EventReason } from "./events.js";
import type { FleetHoldReason } from "./fleet.js";

/** The Event of each hold of the fleet's (fleet.ts); the guard's are FenceGuardHeld. */
const FLEET_HOLD_EVENTS: Partial<Record<string, EventReason>> = {
  CorrelatedSilence: EVENT_REASONS.correlatedSilenceHeld,
  AllZonesDisrupted: EVENT_REASONS.allZonesDisruptedHeld,
} satisfies Record<FleetHoldReason, EventReason>;

/** A wait names this many of its peers in the log, and counts the rest. */
const MAX_PEERS_NAMED = 5;

export class HoldNotices {
  readonly #context: Pick<ActionContext, "log" | "event" | "metrics">;
  readonly #writes: BackgroundTasks;
  /** Per node, the last reason it was held. */
  readonly #lastHold = new Map<string, string>();
  /** Lost nodes already reported as having nothing to release. */
  readonly #nothingToRelease = new Set<string>();

  /** `writes`: where the Events are written (the controller settles it when it stops). */
  constructor(context: Pick<ActionContext, "log" | "event" | "metrics">, writes: BackgroundTasks) {
    this.#context = context;
    this.#writes = writes;
  }

  /** True (and remembered) when `node` is held for another reason than last time. */
  #changed(node: string, reason: string): boolean {
    if (this.#lastHold.get(node) === reason) return false;
    this.#lastHold.set(node, reason);
    return true;
  }

  /**
   * Logs (once per wait, however its set of peers shrinks as they renew) that lost `node` waits for
   * peers silent with it whose renewal is due. At 1000 nodes a wait is for about a tenth of them.
   */
  waitingForPeers(node: string, peers: readonly string[]): void {
    if (!this.#changed(node, "waiting-for-peers")) return;
    const named = peers.slice(0, MAX_PEERS_NAMED).join(", ");
    const more = peers.length > MAX_PEERS_NAMED ? ` and ${peers.length - MAX_PEERS_NAMED} more` : "";
    this.#context.log(
      `${node} lost; waiting for ${named}${more} (silent with it, renewal due) to renew or miss it`,
    );
  }

  /** Logs, counts and records (once per reason, its Event in the background) why a lost node is not fenced. */
  hold(
    node: string,
    reason: string,
    message: string,
    eventReason: EventReason = FLEET_HOLD_EVENTS[reason] ?? EVENT_REASONS.guardHeld,
  ): void {
    if (!this.#changed(node, reason)) return;
    this.#context.metrics.guardHold(reason);
    this.#context.log(`holds ${node}: ${message}`);
    this.#writes.push(() => this.#context.event(node, eventReason, message, "Warning"));
  }

  /** `node` is not held any more (its fence starts, or it is not lost); `healthy`: its outage is over. */
  clear(node: string, healthy = false): void {
    this.#lastHold.delete(node);
    if (healthy) this.#nothingToRelease.delete(node);
  }

  /** Says (once per outage) that lost `node` is not fenced: it holds nothing to release. */
  nothingToRelease(node: string, lostBecause: string): void {
    if (this.#nothingToRelease.has(node)) return;
    this.#nothingToRelease.add(node);
    this.#context.log(
      `${node} lost (${lostBecause}), but it holds no running pods and no attached volumes: not fencing`,
    );
    const message = `not fencing ${node} (${lostBecause}): no running pods and no attached volumes to release`;
    this.#writes.push(() => this.#context.event(node, EVENT_REASONS.nothingToRelease, message));
  }

  /** `node` holds something to release again: a later outage of nothing to release is said again. */
  holdsSomething(node: string): void {
    this.#nothingToRelease.delete(node);
  }
}
