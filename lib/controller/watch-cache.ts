// A cache of one kind of object, kept current by a LIST and then a WATCH from the LIST's
// resourceVersion, on the controller's monotonic clock. Not client-node's ListWatch/makeInformer:
// it stops for good at the first error that is not a 410 (a caller must notice and restart it),
// its WATCH cannot be abandoned while the server does not answer (a frozen API server leaves it
// hanging for ever, with nothing to say so), and it reports neither bookmarks nor when anything
// arrived. Here:
// - every receipt (the LIST, the server answering a WATCH, an event, a bookmark) is timed; the
//   cache is current while its last receipt is at most `staleAfterMs` old, and a longer gap is
//   remembered as a blind spell for the controller to take (takeBlindSpell);
// - a watch quiet for `reopenQuietMs` is reopened from its resourceVersion: the server answering
//   is the proof that it is still there (one small request, no objects), so a quiet watch is not
//   a stale one, and one the server does not answer is abandoned;
// - 410 Gone relists at once; any other failure retries from the same resourceVersion after a
//   backoff (doubling up to `maxRetryMs`).
import { errorMessage } from "../errors.js";
import { isExpired, WatchStatusError } from "../kube/watch-stream.js";
import { sleep } from "../util/time.js";

export interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";

/** Where a cache's objects come from: a real API (watch-source.ts) or a test's fake. */
export interface WatchSource<T> {
  /** What the cache holds, for messages ("Node Leases"). */
  readonly what: string;
  /** A LIST, abandoned when `signal` aborts (the cache stops). */
  list(signal: AbortSignal): Promise<{ items: T[]; resourceVersion: string }>;
  /**
   * Opens a WATCH from `resourceVersion`: resolves when the server answered (then events go to
   * `onEvent` until `ended`), rejects if it did not; ends when `signal` aborts. `readNow`, if
   * given, delivers every event received so far (a watch read in batches reads out of turn).
   */
  watch(
    resourceVersion: string,
    signal: AbortSignal,
    onEvent: (type: string, object: T) => void,
  ): Promise<{ ended: Promise<void>; readNow?: () => Promise<void> }>;
}

export interface WatchCacheOptions<T> {
  source: WatchSource<T>;
  /** The controller's monotonic clock (ms). */
  now: () => number;
  /** No receipt for longer than this: the cache is stale. */
  staleAfterMs: number;
  /** A watch with no receipt for this long is reopened from its resourceVersion. Less than staleAfterMs. */
  reopenQuietMs: number;
  /** Told of each object that changed (a relist's differences too), with when it was received. */
  onChange?: (type: ChangeType, object: T, previous: T | undefined, atMs: number) => void;
  log?: (message: string) => void;
  /** First wait after a failure (doubling per failure). Default 200 ms. */
  minRetryMs?: number;
  /** Longest wait after a failure. Default 5000 ms. */
  maxRetryMs?: number;
  /** How often a quiet watch is looked at (real time). Default quietCheckIntervalMs's. */
  tickMs?: number;
}

/**
 * How often a watch is looked at for quiet: a sixth of reopenQuietMs, but at most a quarter of the
 * margin between reopening and going stale, so a quiet watch is reopened (and the server's answer
 * received) well before it could look stale; from 10 ms to 5 s. The Lease watch's (1.5 s, stale
 * at 3 s): 250 ms; the other watches' (30 s, stale at 33 s): 750 ms.
 */
export function quietCheckIntervalMs(reopenQuietMs: number, staleAfterMs: number): number {
  const margin = staleAfterMs - reopenQuietMs;
  return Math.max(10, Math.min(reopenQuietMs / 6, margin / 4, 5_000));
}

/** A spell during which the cache was not known current: from its last receipt before, to the first after (undefined while it lasts). */
export interface BlindSpell {
  sinceAt: number;
  untilAt: number | undefined;
}

/** Objects are kept by namespace/name. */
export function objectKey(object: KubeObject): string {
  return `${object.metadata?.namespace ?? ""}/${object.metadata?.name ?? ""}`;
}

export class WatchCache<T extends KubeObject> {
  readonly #options: WatchCacheOptions<T>;
  #objects = new Map<string, T>();
  #resourceVersion = "";
  #mustList = true;
  #lastReceiptAt: number | undefined;
  /** A gap longer than staleAfter between two receipts, not taken yet. */
  #gap: { sinceAt: number; untilAt: number } | undefined;
  #error: string | undefined;
  #stop: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #synced = false;
  /** The open watch's out-of-turn read, if it has one. */
  #readNow: (() => Promise<void>) | undefined;
  /** Reads waiting for the first LIST: told when it succeeds, or when an attempt fails. */
  #waiting = new Set<{ resolve: () => void; reject: (error: unknown) => void }>();

  constructor(options: WatchCacheOptions<T>) {
    this.#options = options;
  }

  get what(): string {
    return this.#options.source.what;
  }

  /** Starts listing and watching (idempotent). */
  start(): void {
    if (this.#loop) return;
    const stop = new AbortController();
    this.#stop = stop;
    this.#loop = this.#run(stop.signal);
  }

  async stop(): Promise<void> {
    this.#stop?.abort(new Error(`${this.what} cache stopped`));
    await this.#loop;
  }

  get(name: string, namespace = ""): T | undefined {
    return this.#objects.get(`${namespace}/${name}`);
  }

  values(): IterableIterator<T> {
    return this.#objects.values();
  }

  /**
   * Resolves once listed; before, waits for the first LIST (started if need be) and rejects with
   * its error if an attempt fails, or after `timeoutMs`. The cache keeps retrying either way.
   */
  async whenSynced(timeoutMs: number): Promise<void> {
    this.start();
    if (this.#synced) return;
    let timer: NodeJS.Timeout | undefined;
    let waiter: { resolve: () => void; reject: (error: unknown) => void } | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        waiter = { resolve, reject };
        this.#waiting.add(waiter);
        timer = setTimeout(() => {
          reject(
            new Error(
              `${this.what} not listed after ${timeoutMs} ms${this.#error ? `: ${this.#error}` : ""}`,
            ),
          );
        }, timeoutMs);
      });
    } finally {
      clearTimeout(timer);
      if (waiter) this.#waiting.delete(waiter);
    }
  }

  #tellWaiting(error?: unknown): void {
    for (const waiter of this.#waiting) {
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
    this.#waiting.clear();
  }

  /**
   * Takes in every event the open watch has received so far (a watch read in batches is read out
   * of turn), for a decision that must act on the present. At once when no watch is open.
   */
  async catchUp(): Promise<void> {
    await this.#readNow?.();
  }

  /** Current: listed, and a receipt within staleAfter. */
  isCurrent(nowMs = this.#options.now()): boolean {
    return this.#lastReceiptAt !== undefined && nowMs - this.#lastReceiptAt <= this.#options.staleAfterMs;
  }

  /** Why the cache is not current (for errors, logs and /healthz), or undefined when it is. */
  staleness(nowMs = this.#options.now()): string | undefined {
    if (this.isCurrent(nowMs)) return undefined;
    const last = this.#lastReceiptAt;
    const error = this.#error ? ` (${this.#error})` : "";
    if (last === undefined) return `${this.what}: not listed yet${error}`;
    return `${this.what}: nothing received for ${Math.round(nowMs - last)} ms${error}`;
  }

  /**
   * The blind spell not taken yet: a gap of more than staleAfter between two receipts, or the one
   * going on now (untilAt undefined; reported again at every call until it ends). Undefined if none.
   */
  takeBlindSpell(nowMs = this.#options.now()): BlindSpell | undefined {
    const last = this.#lastReceiptAt;
    if (last !== undefined && nowMs - last > this.#options.staleAfterMs) {
      const sinceAt = Math.min(this.#gap?.sinceAt ?? last, last);
      this.#gap = undefined;
      return { sinceAt, untilAt: undefined };
    }
    const gap = this.#gap;
    this.#gap = undefined;
    return gap;
  }

  #receipt(atMs: number): void {
    const last = this.#lastReceiptAt;
    if (last !== undefined && atMs - last > this.#options.staleAfterMs) {
      this.#gap = { sinceAt: Math.min(this.#gap?.sinceAt ?? last, last), untilAt: atMs };
    }
    this.#lastReceiptAt = atMs;
  }

  async #run(stop: AbortSignal): Promise<void> {
    let failures = 0;
    const stopped = () => stop.aborted;
    while (!stopped()) {
      try {
        if (this.#mustList) await this.#relist(stop);
        await this.#watchOnce(stop);
        failures = 0;
      } catch (error) {
        if (stopped()) break;
        if (isExpired(error)) {
          this.#mustList = true;
          // The first 410 relists at once; one right after a relist waits like any failure.
          if (failures === 0) {
            failures = 1;
            continue;
          }
        }
        failures += 1;
        if (!this.#synced) this.#tellWaiting(error);
        const message = errorMessage(error);
        if (message !== this.#error) this.#options.log?.(`${this.what}: ${message} (retrying)`);
        this.#error = message;
        const min = this.#options.minRetryMs ?? 200;
        const waitMs = Math.min(this.#options.maxRetryMs ?? 5_000, min * 2 ** (failures - 1));
        await sleep(waitMs, stop).catch(() => undefined);
      }
    }
  }

  async #relist(stop: AbortSignal): Promise<void> {
    const list = await this.#options.source.list(stop);
    const at = this.#options.now();
    const fresh = new Map<string, T>();
    for (const object of list.items) fresh.set(objectKey(object), object);
    const onChange = this.#options.onChange;
    for (const [key, object] of fresh) {
      const previous = this.#objects.get(key);
      if (!previous) onChange?.("ADDED", object, undefined, at);
      else if (!sameVersion(previous, object)) onChange?.("MODIFIED", object, previous, at);
    }
    for (const [key, object] of this.#objects) {
      if (!fresh.has(key)) onChange?.("DELETED", object, object, at);
    }
    this.#objects = fresh;
    this.#resourceVersion = list.resourceVersion;
    this.#mustList = false;
    this.#error = undefined;
    this.#receipt(at);
    this.#synced = true;
    this.#tellWaiting();
  }

  /** One WATCH, until the server ends it, it fails, it stays quiet too long, or the cache stops. */
  async #watchOnce(stop: AbortSignal): Promise<void> {
    const { now, reopenQuietMs } = this.#options;
    const connection = new AbortController();
    const onStop = () => {
      connection.abort(stop.reason);
    };
    stop.addEventListener("abort", onStop, { once: true });
    const openedAt = now();
    let failure: Error | undefined;
    // Quiet since the later of the last receipt and this attempt: one attempt per reopenQuietMs
    // while the server does not answer.
    const timer = setInterval(
      () => {
        if (now() - Math.max(this.#lastReceiptAt ?? openedAt, openedAt) >= reopenQuietMs) {
          connection.abort(new Error("quiet: reopened"));
        }
      },
      this.#options.tickMs ?? quietCheckIntervalMs(reopenQuietMs, this.#options.staleAfterMs),
    );
    timer.unref();
    try {
      const { ended, readNow } = await this.#options.source.watch(
        this.#resourceVersion,
        connection.signal,
        (type, object) => {
          if (failure !== undefined || connection.signal.aborted) return;
          failure = this.#event(type, object);
          if (failure !== undefined) connection.abort(failure);
        },
      );
      this.#receipt(now());
      this.#error = undefined;
      this.#readNow = readNow;
      await ended;
    } catch (error) {
      if (failure === undefined && !connection.signal.aborted) throw error;
    } finally {
      this.#readNow = undefined;
      clearInterval(timer);
      stop.removeEventListener("abort", onStop);
      connection.abort(new Error("watch ended"));
    }
    if (failure !== undefined) throw failure;
  }

  /** Applies one event; returns the failure an ERROR event stands for. */
  #event(type: string, object: T): Error | undefined {
    if (type === "ERROR") {
      const status = object as { code?: number; message?: string };
      return new WatchStatusError(
        status.code ?? 0,
        `${this.what}: watch ERROR ${status.code ?? "?"} ${status.message ?? ""}`,
      );
    }
    const at = this.#options.now();
    const version = object.metadata?.resourceVersion;
    if (version) this.#resourceVersion = version;
    this.#receipt(at);
    if (type === "BOOKMARK") return undefined;
    const key = objectKey(object);
    const previous = this.#objects.get(key);
    if (type === "DELETED") {
      this.#objects.delete(key);
      if (previous) this.#options.onChange?.("DELETED", object, previous, at);
      return undefined;
    }
    if (type !== "ADDED" && type !== "MODIFIED") return undefined;
    this.#objects.set(key, object);
    if (!previous || !sameVersion(previous, object)) {
      this.#options.onChange?.(previous ? "MODIFIED" : "ADDED", object, previous, at);
    }
    return undefined;
  }
}

function sameVersion(a: KubeObject, b: KubeObject): boolean {
  const version = a.metadata?.resourceVersion;
  return version !== undefined && version !== "" && version === b.metadata?.resourceVersion;
}
