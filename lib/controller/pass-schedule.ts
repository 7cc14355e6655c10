// When the next reconcile pass runs. Passes run a check interval apart, which put every decision
// up to a check after the moment it became due. Two moments are known in advance and are not left
// to the next check: a node crossing unhealthyAfter (its silence began at its last renewal seen),
// and, while a lost node waits for peers whose renewal is due (detect.ts, `peersSilentWith`), their
// renewal or its absence, looked at every quarter check (a Lease is read at most that late).
import type { ControllerConfig } from "./config.js";
import type { NodeHealth } from "./detect.js";
import type { NodeObservations } from "./observations.js";
import type { NodePlan } from "./plan.js";

export interface PassScheduleInput {
  /** This controller's monotonic clock now. */
  nowMs: number;
  checkIntervalMs: number;
  unhealthyAfterMs: number;
  /** When each node not judged lost yet, with a Lease, last gave a sign of life. */
  lastSignsAt: Iterable<number>;
  /** A lost node is waiting for peers in this pass. */
  waitingForPeers: boolean;
}

/** A pass sooner than this after the last is not worth its cost. */
export const MIN_PASS_GAP_MS = 20;

/** When the next pass should start (monotonic ms): within one check interval of `nowMs`. */
export function nextPassAt(input: PassScheduleInput): number {
  const { nowMs, checkIntervalMs, unhealthyAfterMs } = input;
  let next = nowMs + (input.waitingForPeers ? checkIntervalMs / 4 : checkIntervalMs);
  for (const lastSignAt of input.lastSignsAt) {
    // Judged lost once silent for more than unhealthyAfter: a millisecond past it.
    const lostAt = lastSignAt + unhealthyAfterMs + 1;
    if (lostAt > nowMs && lostAt < next) next = lostAt;
  }
  return Math.max(next, nowMs + MIN_PASS_GAP_MS);
}

/** When each node not judged lost, with a Lease, last gave a sign of life. */
function* lastSignsOfNodesNotLost(
  health: ReadonlyMap<string, NodeHealth>,
  observations: Pick<NodeObservations, "get">,
): Generator<number> {
  for (const [name, h] of health) {
    if (h.state === "unhealthy") continue;
    const observation = observations.get(name);
    if (observation?.renewTime !== undefined) yield observation.lastSignAt;
  }
}

/** The controller's next pass: set by each pass that acts, used once by the sleep after it. */
export class PassSchedule {
  #nextAt: number | undefined;

  /** A pass (at `nowMs`) has planned every node. */
  afterPass(
    nowMs: number,
    config: Pick<ControllerConfig, "checkIntervalMs" | "unhealthyAfterMs">,
    health: ReadonlyMap<string, NodeHealth>,
    observations: Pick<NodeObservations, "get">,
    plans: readonly { plan: NodePlan }[],
  ): void {
    this.#nextAt = nextPassAt({
      nowMs,
      checkIntervalMs: config.checkIntervalMs,
      unhealthyAfterMs: config.unhealthyAfterMs,
      lastSignsAt: lastSignsOfNodesNotLost(health, observations),
      waitingForPeers: plans.some(({ plan }) => plan.kind === "wait-for-peers"),
    });
  }

  /**
   * How long to sleep at `nowMs` before the next pass: at most a check interval, which is all after
   * a pass that did not plan (a standby's, a blind one's).
   */
  sleepMs(nowMs: number, checkIntervalMs: number): number {
    const next = this.#nextAt;
    this.#nextAt = undefined;
    if (next === undefined) return checkIntervalMs;
    return Math.min(checkIntervalMs, Math.max(0, next - nowMs));
  }
}
