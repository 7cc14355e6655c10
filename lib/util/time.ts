// Small async time helpers that honour AbortSignal.
import { setTimeout as delay } from "node:timers/promises";
import { RekindleError } from "../errors.js";

export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, signal ? { signal } : undefined);
  } catch (error) {
    if (signal?.aborted) throw new RekindleError("ABORTED", "wait aborted", { cause: signal.reason });
    throw error;
  }
}

export interface PollOptions {
  /** What is awaited, for progress and the timeout message. */
  what: string;
  timeoutMs: number;
  /** Default 250 ms. */
  intervalMs?: number;
  signal?: AbortSignal;
  /** Called with the elapsed time every `reportEveryMs` while waiting. */
  onWait?: (elapsedMs: number) => void;
  /** Default 10 000 ms. */
  reportEveryMs?: number;
}

/**
 * Calls `check` until it returns a value other than undefined, or throws TIMEOUT naming `what`.
 * Errors thrown by `check` end the wait at once.
 */
export async function pollUntil<T>(check: () => Promise<T | undefined>, options: PollOptions): Promise<T> {
  const started = Date.now();
  const interval = options.intervalMs ?? 250;
  let lastReport = started;
  for (;;) {
    if (options.signal?.aborted) {
      throw new RekindleError("ABORTED", `aborted while waiting for ${options.what}`, {
        cause: options.signal.reason,
      });
    }
    const value = await check();
    if (value !== undefined) return value;
    const now = Date.now();
    if (now - started >= options.timeoutMs) {
      throw new RekindleError(
        "TIMEOUT",
        `timed out after ${options.timeoutMs} ms waiting for ${options.what}`,
        {
          details: { what: options.what, timeoutMs: options.timeoutMs },
        },
      );
    }
    if (options.onWait && now - lastReport >= (options.reportEveryMs ?? 10_000)) {
      lastReport = now;
      options.onWait(now - started);
    }
    await sleep(interval, options.signal);
  }
}

/** Awaits `promise`, or throws TIMEOUT naming `what` after `timeoutMs`. */
export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(
        new RekindleError("TIMEOUT", `timed out after ${timeoutMs} ms waiting for ${what}`, {
          details: { what, timeoutMs },
        }),
      );
    }, timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads `signal.aborted` afresh (a plain property read after an await is narrowed away by TypeScript). */
export function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * Awaits `promise`, or throws as soon as `signal` aborts (with its reason): for calls into code that
 * may not honour the signal itself (a hung BMC, a webhook with no timeout). The abandoned promise
 * is left to settle on its own.
 */
export async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) throw signal.reason;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      reject(signal.reason as Error);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

export interface WakeOptions {
  /** What is awaited, for progress and the timeout message. */
  what: string;
  timeoutMs: number;
  /** Registers `wake` with whatever announces changes; returns its removal. */
  subscribe: (wake: () => void) => () => void;
  /** Also checks this often, for changes nothing announces (default: only when woken). */
  recheckEveryMs?: number;
  signal?: AbortSignal;
  /** Called with the elapsed time every `reportEveryMs` while waiting. */
  onWait?: (elapsedMs: number) => void;
  /** Default 10 000 ms. */
  reportEveryMs?: number;
}

/**
 * Calls `check` now and again each time the subscription wakes it (wakes within one turn of the
 * event loop count once), until it returns a value other than undefined; throws TIMEOUT naming
 * `what` after `timeoutMs`, ABORTED when the signal aborts. An error thrown by `check` ends the wait.
 */
export function waitUntil<T>(check: () => T | undefined, options: WakeOptions): Promise<T> {
  const { signal, what, timeoutMs } = options;
  const started = Date.now();
  return new Promise<T>((resolve, reject) => {
    const cleanups: (() => void)[] = [];
    const state = { done: false };
    const finish = (error: Error | undefined, value?: T) => {
      if (state.done) return;
      state.done = true;
      for (const cleanup of cleanups) cleanup();
      if (error === undefined) resolve(value as T);
      else reject(error);
    };
    const run = () => {
      if (state.done) return;
      try {
        const value = check();
        if (value !== undefined) finish(undefined, value);
      } catch (error) {
        finish(error instanceof Error ? error : new Error(String(error)));
      }
    };
    const aborted = () =>
      new RekindleError("ABORTED", `aborted while waiting for ${what}`, { cause: signal?.reason });
    if (signal?.aborted) {
      finish(aborted());
      return;
    }
    run();
    if (state.done) return;
    let scheduled: NodeJS.Immediate | undefined;
    cleanups.push(
      options.subscribe(() => {
        scheduled ??= setImmediate(() => {
          scheduled = undefined;
          run();
        });
      }),
      () => {
        if (scheduled) clearImmediate(scheduled);
      },
    );
    const timeout = setTimeout(() => {
      finish(
        new RekindleError("TIMEOUT", `timed out after ${timeoutMs} ms waiting for ${what}`, {
          details: { what, timeoutMs },
        }),
      );
    }, timeoutMs);
    cleanups.push(() => {
      clearTimeout(timeout);
    });
    const { onWait } = options;
    if (onWait) {
      const report = setInterval(() => {
        onWait(Date.now() - started);
      }, options.reportEveryMs ?? 10_000);
      cleanups.push(() => {
        clearInterval(report);
      });
    }
    if (options.recheckEveryMs !== undefined) {
      const recheck = setInterval(run, options.recheckEveryMs);
      cleanups.push(() => {
        clearInterval(recheck);
      });
    }
    if (signal) {
      const onAbort = () => {
        finish(aborted());
      };
      signal.addEventListener("abort", onAbort, { once: true });
      cleanups.push(() => {
        signal.removeEventListener("abort", onAbort);
      });
    }
  });
}
