// The two clocks a long-running process reads. Durations (how long a node has been silent, how long
// a pass or a leadership term has lasted) are measured on a monotonic clock, which an NTP step or a
// person setting the date cannot move; only timestamps that other processes read (a NodeFence's
// status, a Lease's renewTime) come from the wall clock.
import { performance } from "node:perf_hooks";

export interface Clock {
  /** Milliseconds on a clock that never steps back or jumps: for durations within this process. */
  readonly monotonicMs: () => number;
  /** Milliseconds since the epoch: only for timestamps written where another process reads them. */
  readonly wallMs: () => number;
}

/** The system's clocks: performance.now() (monotonic since process start) and Date.now(). */
export const SYSTEM_CLOCK: Clock = {
  monotonicMs: () => performance.now(),
  wallMs: () => Date.now(),
};

/**
 * The clock for an injectable `now` option: a test's fake `now` drives both durations and
 * timestamps (so a test moves time by one assignment); without one, the system's clocks.
 */
export function clockFrom(now: (() => number) | undefined): Clock {
  return now === undefined ? SYSTEM_CLOCK : { monotonicMs: now, wallMs: now };
}
