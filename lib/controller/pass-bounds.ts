// How long a reconcile pass, and each call in it, may take. A pass ends at passTimeout at the
// latest: what is still under way then is abandoned (its calls aborted) and the next pass takes it
// up again from the NodeFence. Each API and driver call ends at its own timeout, at the end of the
// pass, or, for a leader, before any standby could take over, whichever comes first: a call that
// outlived the term could act on a cluster another replica already acts on.
import { setMaxListeners } from "node:events";
import type { ControllerConfig } from "./config.js";
import type { LeaderElector } from "./leader.js";

export interface PassBoundsOptions {
  config: Pick<ControllerConfig, "apiTimeoutMs" | "driverTimeoutMs" | "passTimeoutMs">;
  leader?: LeaderElector | undefined;
  /** The controller's monotonic clock (ms). */
  now: () => number;
  /** Aborted when the controller stops: every pass's signal aborts with it. */
  stopped: AbortSignal;
}

export class PassBounds {
  readonly #options: PassBoundsOptions;
  #pass: { signal: AbortSignal; deadlineAt: number; dispose: () => void } | undefined;

  constructor(options: PassBoundsOptions) {
    this.#options = options;
  }

  /** Starts a pass: its signal aborts passTimeout from now, or when the controller stops. */
  begin(): void {
    this.end();
    const { passTimeoutMs } = this.#options.config;
    const { stopped } = this.#options;
    const controller = new AbortController();
    // Every call of the pass under way listens (up to nodeConcurrency nodes, several calls each):
    // more than Node's default of 10 is by design, and each listener goes when its call ends.
    setMaxListeners(0, controller.signal);
    const onStop = () => {
      controller.abort(stopped.reason);
    };
    const timer = setTimeout(() => {
      controller.abort(new Error(`the reconcile pass ran past its ${passTimeoutMs} ms bound`));
    }, passTimeoutMs);
    if (stopped.aborted) onStop();
    else stopped.addEventListener("abort", onStop, { once: true });
    this.#pass = {
      signal: controller.signal,
      deadlineAt: this.#options.now() + passTimeoutMs,
      dispose: () => {
        clearTimeout(timer);
        stopped.removeEventListener("abort", onStop);
      },
    };
  }

  /** Ends the pass (its timer and listener go). */
  end(): void {
    this.#pass?.dispose();
    this.#pass = undefined;
  }

  /** Aborted when the current pass ran out of time or the controller stopped (between passes: when it stopped). */
  get signal(): AbortSignal {
    return this.#pass?.signal ?? this.#options.stopped;
  }

  /** What is left of the pass (Infinity between passes). */
  remainingMs(): number {
    return this.#pass ? Math.max(0, this.#pass.deadlineAt - this.#options.now()) : Infinity;
  }

  /** The timeout of an API call started now: apiTimeout, cut to the pass and, when leading, to the term. */
  apiTimeoutMs(): number {
    return this.#bound(this.#options.config.apiTimeoutMs);
  }

  /** The timeout of a fence driver call started now: driverTimeout, cut the same way. */
  driverTimeoutMs(): number {
    return this.#bound(this.#options.config.driverTimeoutMs);
  }

  #bound(timeoutMs: number): number {
    const leader = this.#options.leader;
    // A standby only reads; a leader's call must end before a standby could take over.
    const term = leader?.isLeader === true ? leader.safeActionMs() : Infinity;
    return Math.max(1, Math.min(timeoutMs, this.remainingMs(), term));
  }
}
