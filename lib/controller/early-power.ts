// Faster when power loss can be confirmed (issue 25, item 7). A node that has missed a Lease
// renewal may be off or only cut off from the API server; silence alone cannot tell, so the
// controller waits unhealthyAfter. Its fence driver often can tell: when it reads the node's power
// OFF, the node runs nothing and is already fenced, so it is lost at once (detect.ts) and its fence,
// taint and cleanup follow without waiting for unhealthyAfter, for nodes silent with it, or for the
// fleet-wide rate (plan.ts, fleet.ts): none of those guards against anything for a node that is off.
// A node read ON (a partition, a hung kubelet) keeps the normal path. One read per missed renewal
// per node, by the leader only, never awaited by a pass: a slow BMC delays nothing.
// A driver that hears of power losses as they happen (drivers/types.ts, watchPowerLoss) makes the
// read come at once instead of at the missed renewal: the power loss falls anywhere in the renewal
// interval, so this saves half of it on average. The notice only brings the read forward; the read
// is still the evidence.
import { errorMessage } from "../errors.js";
import { boundedSignal } from "../util/abort.js";
import type { ActionContext } from "./action-context.js";
import { driverCall } from "./node-effects.js";
import { MANUAL_DRIVER_NAME } from "./drivers/manual.js";
import type { FenceDriverRegistry } from "./drivers/registry.js";
import type { PowerState, PowerWatchOptions } from "./drivers/types.js";
import { optionsFor, templateFor, type FenceConfig } from "./fence-config.js";
import type { GuardNode } from "./guard.js";
import { missedRenewalAfterMs, type NodeObservations } from "./observations.js";
import type { CurrentNodeReader } from "./present.js";

/** An early read's answer: the state and the driver that read it. */
export interface EarlyPowerAnswer {
  state: PowerState;
  driver: string;
}

export interface EarlyPowerReadsOptions {
  observations: NodeObservations;
  checkIntervalMs: number;
  unhealthyAfterMs: number;
  /**
   * At most this many reads under way at once (a partition silences a whole rack: its BMCs, or a
   * fence agent's processes, are not all asked at once); the rest wait for a later pass.
   */
  maxConcurrent: number;
  /**
   * Reads the node's power through its fence driver, bounded by the driver timeout; undefined when
   * its driver cannot be asked early (the manual driver: a person's word is asked for by a fence).
   */
  read: (node: string) => Promise<EarlyPowerAnswer | undefined>;
  log: (message: string) => void;
  /** This controller's monotonic clock (ms). */
  now: () => number;
  /** Called when a read finds a node off (the controller starts its next pass at once). Default: nothing. */
  onPoweredOff?: () => void;
  /**
   * The node's state now (the controller's watch caches). A candidate that comes due between passes
   * is judged on the last pass's observations; one whose Lease has a new renewTime by now renewed
   * meanwhile and is not read. Default: no such check (every due candidate is read).
   */
  current?: CurrentNodeReader;
  /**
   * Runs `callback` after `delayMs` and returns its cancel (test seam). Default: an unref'd
   * setTimeout: a pending wake-up keeps no process alive.
   */
  schedule?: (callback: () => void, delayMs: number) => () => void;
}

function scheduleTimer(callback: () => void, delayMs: number): () => void {
  const timer = setTimeout(callback, delayMs);
  timer.unref();
  return () => {
    clearTimeout(timer);
  };
}

/** Which missed renewal a read was for: a node is read again only after it misses another. */
interface ReadKey {
  renewTime: string;
  missed: number;
}

export class EarlyPowerReads {
  readonly #options: EarlyPowerReadsOptions;
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #lastRead = new Map<string, ReadKey>();
  /** The last launch's candidates. */
  #candidates: ReadonlySet<string> = new Set();
  /**
   * Candidates a driver's notice named, to read at once (not waiting for a missed renewal); true for
   * a notice re-armed after its read was skipped (see #rearm), which is not re-armed again.
   */
  readonly #noticed = new Map<string, boolean>();
  /**
   * Noticed nodes whose read was skipped because this controller's caches had a renewal its
   * observations did not have yet (or could not be read): noticed again at the next launch, after
   * the pass has caught up, once per notice. Not at once: the observation would still be behind.
   */
  readonly #rearm = new Set<string>();
  /** Candidates of the last launch not read yet, in order. */
  #waiting: string[] = [];
  /** Cancels the wake-up at the next waiting candidate's due time. */
  #cancelWake: (() => void) | undefined;
  #stopped = false;

  constructor(options: EarlyPowerReadsOptions) {
    this.#options = options;
  }

  /**
   * How many renewals `node` has missed by `nowMs` (0: none, or not a node renewing a Lease, or one
   * whose unhealthyAfter comes before its first missed renewal would).
   */
  missedRenewals(node: string, nowMs: number): number {
    const observation = this.#options.observations.get(node);
    const interval = observation?.renewIntervalMs;
    if (observation?.renewTime === undefined || interval === undefined || interval <= 0) return 0;
    const missedAfter = missedRenewalAfterMs(interval, this.#options.checkIntervalMs);
    if (missedAfter >= this.#options.unhealthyAfterMs) return 0;
    const silentForMs = nowMs - observation.lastSignAt;
    return silentForMs < missedAfter ? 0 : 1 + Math.floor((silentForMs - missedAfter) / interval);
  }

  /**
   * Reads each candidate (silent nodes with no fence under way that the guard would consider) that
   * missed a renewal since its last read: up to maxConcurrent at once, the next one as soon as a
   * read ends, and one that is not due yet when it comes due (not at the next pass: a zone's worth
   * of reads would take one pass per batch, and a long pass would hold back a renewal missed
   * during it). The candidates replace those of the last call. Returns at once.
   */
  launch(candidates: readonly string[]): void {
    if (this.#stopped) return;
    this.#candidates = new Set(candidates);
    for (const node of this.#rearm) this.#noticed.set(node, true);
    this.#rearm.clear();
    for (const node of this.#noticed.keys()) if (!this.#candidates.has(node)) this.#noticed.delete(node);
    this.#waiting = [...this.#noticed.keys(), ...candidates.filter((node) => !this.#noticed.has(node))];
    this.#pump();
  }

  /**
   * A driver heard that some machine's power went off: the last launch's candidates `isAbout` names
   * are read now, ahead of the rest, instead of at their next missed renewal (at most
   * maxConcurrent at once, as every read). Returns at once; a node read off is lost as after a
   * missed renewal, one read on keeps its normal path. Only nodes last seen Ready: one whose
   * kubelet said it was not (a graceful shutdown says "node is shutting down" before it ends its
   * pods and powers off) is releasing its workloads itself, and reading it at its power-off would
   * race that; it is read at its missed renewal as before (graceful-shutdown/no-fence).
   */
  notice(isAbout: (node: string) => boolean): void {
    if (this.#stopped) return;
    const { observations } = this.#options;
    const named = [...this.#candidates].filter(
      (node) => !this.#noticed.has(node) && observations.get(node)?.ready === "True" && isAbout(node),
    );
    if (named.length === 0) return;
    for (const node of named) this.#noticed.set(node, false);
    const rest = this.#waiting.filter((node) => !this.#noticed.has(node));
    this.#waiting = [...this.#noticed.keys(), ...rest];
    this.#pump();
  }

  /** Starts no read any more (the controller stops); `settle()` then waits for those under way. */
  stop(): void {
    this.#stopped = true;
    this.#waiting = [];
    this.#noticed.clear();
    this.#rearm.clear();
    this.#cancelWake?.();
    this.#cancelWake = undefined;
  }

  /**
   * When `node` is due for its next read on the monotonic clock: its next missed renewal since the
   * last read; undefined when it is never read early (no Lease, already read off for this renewal,
   * or unhealthyAfter comes first).
   */
  #dueAt(node: string): number | undefined {
    const observation = this.#options.observations.get(node);
    if (observation === undefined) return undefined;
    const { renewTime, renewIntervalMs: interval } = observation;
    if (renewTime === undefined || interval === undefined || interval <= 0) return undefined;
    if (observation.poweredOff?.renewTime === renewTime) {
      this.#noticed.delete(node);
      return undefined;
    }
    if (this.#noticed.has(node)) return observation.lastSignAt;
    const missedAfter = missedRenewalAfterMs(interval, this.#options.checkIntervalMs);
    if (missedAfter >= this.#options.unhealthyAfterMs) return undefined;
    const last = this.#lastRead.get(node);
    const readFor = last?.renewTime === renewTime ? last.missed : 0;
    return observation.lastSignAt + missedAfter + readFor * interval;
  }

  #pump(): void {
    this.#cancelWake?.();
    this.#cancelWake = undefined;
    if (this.#stopped) return;
    const { now, maxConcurrent, checkIntervalMs } = this.#options;
    const nowMs = now();
    const notDue: string[] = [];
    let nextDueAt = Infinity;
    let index = 0;
    for (; index < this.#waiting.length && this.#inFlight.size < maxConcurrent; index += 1) {
      const name = this.#waiting[index] ?? "";
      if (this.#inFlight.has(name)) continue;
      const dueAt = this.#dueAt(name);
      if (dueAt === undefined) continue;
      if (dueAt > nowMs) {
        notDue.push(name);
        nextDueAt = Math.min(nextDueAt, dueAt);
        continue;
      }
      this.#start(name, nowMs);
    }
    // Past a full house the rest wait for a read to end, which pumps again.
    this.#waiting = [...notDue, ...this.#waiting.slice(index)];
    if (this.#inFlight.size >= maxConcurrent || !Number.isFinite(nextDueAt)) return;
    // In a large fleet some node is always about to miss a renewal it will make: wake at most
    // four times a check interval, each wake a walk over the candidates.
    const delayMs = Math.max(nextDueAt - nowMs, checkIntervalMs / 4);
    const schedule = this.#options.schedule ?? scheduleTimer;
    this.#cancelWake = schedule(() => {
      this.#cancelWake = undefined;
      this.#pump();
    }, delayMs);
  }

  #start(name: string, nowMs: number): void {
    const renewTime = this.#options.observations.get(name)?.renewTime ?? "";
    const missed = this.missedRenewals(name, nowMs);
    const rearmed = this.#noticed.get(name);
    const noticed = this.#noticed.delete(name);
    this.#lastRead.set(name, { renewTime, missed });
    const why = noticed
      ? `had a power-loss notice (${missed} Lease renewal(s) missed)`
      : `missed ${missed} Lease renewal(s)`;
    const read = this.#readOne(name, renewTime, why, rearmed === false).finally(() => {
      this.#inFlight.delete(name);
      this.#pump();
    });
    this.#inFlight.set(name, read);
  }

  /** Forgets nodes no longer in the cluster. */
  retain(nodes: ReadonlySet<string>): void {
    for (const name of [...this.#lastRead.keys()]) if (!nodes.has(name)) this.#lastRead.delete(name);
  }

  /** Waits for the reads under way, and those they start (they end at the driver timeout, or when the controller stops). */
  async settle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight.values()]);
  }

  /** Has `node` renewed nothing since the observation its read is for? Unreadable: not read now, read again later. */
  async #stillSilent(node: string, renewTime: string, current: CurrentNodeReader): Promise<boolean> {
    try {
      const state = await current(node);
      return state?.renewTime === renewTime;
    } catch {
      this.#lastRead.delete(node);
      return false;
    }
  }

  /**
   * `rearmOnSkip`: the read is a notice's first; if the caches say the node renewed after the
   * observation the read is keyed on, the notice is kept for the next launch (a power loss just
   * after a renewal the pass has not seen yet would otherwise wait for the missed renewal).
   */
  async #readOne(node: string, renewTime: string, why: string, rearmOnSkip: boolean): Promise<void> {
    const { read, observations, log, now, current } = this.#options;
    if (current && !(await this.#stillSilent(node, renewTime, current))) {
      if (rearmOnSkip && !this.#stopped) this.#rearm.add(node);
      return;
    }
    let answer: Awaited<ReturnType<typeof read>>;
    try {
      answer = await read(node);
    } catch (error) {
      log(`${node} ${why}; its power could not be read early: ${errorMessage(error)}`);
      return;
    }
    if (answer === undefined || answer.state !== "off") return;
    if (observations.recordPowerOff(node, renewTime, { atMs: now(), driver: answer.driver })) {
      log(
        `${node} ${why} and ${answer.driver} reports its power off: lost now, without waiting for unhealthyAfter`,
      );
      this.#options.onPoweredOff?.();
    }
  }
}

/**
 * Reads a node's power through its fence driver for an early read: bounded by the driver timeout
 * and by `signal` (the controller stopping, or its leadership ending), never by a pass, which
 * does not wait for it. The manual driver is not asked (undefined). Failures are counted.
 */
export function driverPowerReader(
  context: Pick<ActionContext, "driver" | "driverSignal" | "metrics">,
  signal: () => AbortSignal,
  timeoutMs: () => number,
): (node: string) => Promise<EarlyPowerAnswer | undefined> {
  return async (node) => {
    const { driver, target } = await context.driver(node);
    if (driver.name === MANUAL_DRIVER_NAME) return undefined;
    const bounded = boundedSignal(signal(), timeoutMs(), `the early power read of ${node}`);
    const state = await driverCall(context, driver.name, (s) => driver.powerState(target, s), bounded);
    return { state, driver: driver.name };
  };
}

/**
 * Brings `early`'s reads forward on the power-loss notices of every driver a fence template names
 * that gives them (drivers/types.ts, watchPowerLoss), until `options.signal` aborts. A notice names
 * targets; a node is named when its template's driver gave the notice and its target matches.
 */
export function watchPowerLosses(
  early: EarlyPowerReads,
  drivers: FenceDriverRegistry,
  fenceConfig: FenceConfig,
  options: PowerWatchOptions,
): void {
  const named = new Set(Object.values(fenceConfig.templates).map((template) => template.driver));
  for (const name of named) {
    const driver = drivers.get(name);
    if (driver?.watchPowerLoss === undefined) continue;
    driver.watchPowerLoss((isAbout) => {
      early.notice((node) => {
        let template;
        try {
          template = templateFor(fenceConfig, node).template;
        } catch {
          return false; // a node without a template: the start-up check has said so
        }
        return template.driver === name && isAbout({ node, options: optionsFor(template, node) });
      });
    }, options);
  }
}

/**
 * The nodes a pass may read early: not lost yet, no fence under way, and ones the guard would
 * consider (not control-plane, excluded or unselected). None while paused.
 */
export function earlyReadCandidates(guard: readonly GuardNode[], paused: boolean): string[] {
  if (paused) return [];
  return guard
    .filter((g) => !g.controlPlane && !g.excluded && g.unselected !== true && !g.fencing && !g.unhealthy)
    .map((g) => g.name);
}
