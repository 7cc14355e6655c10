// Keeps a long-lived subscription (an event stream, a file watch) open until a signal ends it:
// each time it breaks or cannot start, says so once and opens it again after a backoff. For
// watches whose events are hints (a missed one costs time, not safety), so nothing is thrown.
import { errorMessage } from "../errors.js";
import { sleep } from "./time.js";

export interface KeepWatchingOptions {
  /** Ends the watch: the subscription's own signal aborts, no new one is opened. */
  signal: AbortSignal;
  /** Told when the subscription breaks or cannot open, and when it is open again after that. */
  log: (message: string) => void;
  /** First wait before opening again, doubled after each failure up to `maxDelayMs`. Default 1 s. */
  minDelayMs?: number;
  /** Default 30 s. */
  maxDelayMs?: number;
}

/**
 * Runs `open(connected, signal)` again and again until `options.signal` aborts. `open` resolves when
 * its subscription ends and rejects when it breaks; it calls `connected()` once it is receiving,
 * which resets the backoff. `what` names the subscription in the log ("the container engine's
 * events"). Returns the loop's promise, which never rejects (callers may leave it unawaited).
 */
export async function keepWatching(
  what: string,
  open: (connected: () => void, signal: AbortSignal) => Promise<void>,
  options: KeepWatchingOptions,
): Promise<void> {
  const { signal, log } = options;
  const minDelayMs = options.minDelayMs ?? 1000;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  // Changed by `connected` too, hence an object (a let would look constant to the checker here).
  const state = { delayMs: minDelayMs, broken: false };
  while (!signal.aborted) {
    let problem = "it ended";
    try {
      await open(() => {
        state.delayMs = minDelayMs;
        if (state.broken) log(`${what}: watching again`);
        state.broken = false;
      }, signal);
    } catch (error) {
      problem = errorMessage(error);
    }
    // Read through options: the checker takes `signal.aborted` for false since the loop's test.
    if (options.signal.aborted) return;
    if (!state.broken) {
      log(`${what}: not watching (${problem}); trying again in ${state.delayMs / 1000}s, then less often`);
    }
    state.broken = true;
    try {
      await sleep(state.delayMs, signal);
    } catch {
      return;
    }
    state.delayMs = Math.min(state.delayMs * 2, maxDelayMs);
  }
}
