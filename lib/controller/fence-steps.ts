// A fence's start and its steps run beside the reconcile passes, not inside them. They take API and
// driver calls (the claim, the NodeFence, the power-off, the taint, the cleanup): taken inside a
// pass, a zone's worth of them kept every later decision waiting for the pass's end
// (bench:controller, 1000 workers, a third lost at once: decisions 8.5/13.1 s p50/p99 past the
// threshold, while each power read took 0.2 s). A pass decides for every node and hands each
// fence's work here: at most one run per node at once (a pass skips a node whose run is under way
// or queued), at most `limit` runs at once, each run bounded on its own (stepRunContext: the
// controller gives it passTimeout).
import { boundedSignal } from "../util/abort.js";
import { BackgroundTasks } from "../util/bounded-parallel.js";
import type { ActionContext } from "./action-context.js";

export interface FenceStepRunnerOptions {
  /** Runs under way at once; the rest wait in order. */
  limit: number;
}

/** BackgroundTasks keyed by node: one run per node at once, queued ones counted as busy. */
export class FenceStepRunner {
  readonly #tasks: BackgroundTasks;
  /** Nodes whose run is under way or queued. */
  readonly #busy = new Set<string>();

  constructor(options: FenceStepRunnerOptions) {
    this.#tasks = new BackgroundTasks(options.limit);
  }

  /** Are `node`'s steps under way or waiting for a slot? */
  busy(node: string): boolean {
    return this.#busy.has(node);
  }

  /**
   * Runs `work` for `node` when a slot is free, unless the node's steps are already under way or
   * queued (false: the next pass decides again once they end). `work` must not throw: a failure is
   * the caller's to count and log.
   */
  run(node: string, work: () => Promise<void>): boolean {
    if (this.#busy.has(node)) return false;
    this.#busy.add(node);
    this.#tasks.push(() =>
      work().finally(() => {
        this.#busy.delete(node);
      }),
    );
    return true;
  }

  /** Nodes whose steps are under way or queued. */
  get size(): number {
    return this.#busy.size;
  }

  /** Waits until no steps are under way or queued (those started meanwhile included). */
  async settle(): Promise<void> {
    await this.#tasks.settle();
  }
}

/**
 * The context of one run of `node`'s steps: its side effects end `runMs` after it starts or when
 * `parent` aborts (the controller stops, its term ends), and each driver call at its own timeout
 * too. Dispose of it when the run ends.
 */
export function stepRunContext(
  base: ActionContext,
  node: string,
  parent: AbortSignal,
  bounds: { runMs: number; driverTimeoutMs: () => number },
): { context: ActionContext; dispose: () => void } {
  const run = boundedSignal(parent, bounds.runMs, `the fence steps of ${node}`);
  const context: ActionContext = {
    ...base,
    acting: () => run.signal,
    driverSignal: () => boundedSignal(run.signal, bounds.driverTimeoutMs(), "the fence driver call"),
  };
  return {
    context,
    dispose: () => {
      run.dispose();
    },
  };
}
