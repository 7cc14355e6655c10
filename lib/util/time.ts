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
