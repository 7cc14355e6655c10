// `rekindle run --parallel`: the clusters' processes as a pool. Each runs until the queue has
// nothing left for it; a cluster sized for the scenarios that need more workers, done while the
// default-sized ones still have work, is replaced by a default-sized one (a boot costs seconds, an
// idle cluster the rest of the run). At most as many clusters run at once as were asked for.
import type { ScenarioQueue } from "./parallel-queue.js";
import type { SlotSize } from "./parallel-sizes.js";
import type { SlotExit } from "./slot-process.js";

/** What the pool needs of a cluster's process (slot-process.ts's SlotProcess). */
export interface PoolSlot {
  exited: Promise<SlotExit>;
  abort(): void;
}

export interface PoolOptions {
  sizes: readonly SlotSize[];
  queue: ScenarioQueue;
  signal: AbortSignal;
  /** Starts cluster `index` (1-based; replacements number on from sizes.length). */
  start(index: number, size: SlotSize): PoolSlot;
  /** Told when cluster `index` takes the place of sized cluster `replaced`. */
  onReplace?(index: number, replaced: number): void;
}

export interface PoolResult {
  /** Every cluster's exit, by index. */
  exits: { index: number; exit: SlotExit }[];
  /** How many sized clusters were replaced by default-sized ones. */
  replaced: number;
}

/** Runs the clusters to the end (or the interrupt, which aborts every running one). */
export async function runPool(options: PoolOptions): Promise<PoolResult> {
  const { sizes, queue, signal } = options;
  const live = new Set<PoolSlot>();
  const exits: PoolResult["exits"] = [];
  let lastIndex = sizes.length;
  let replaced = 0;
  const onAbort = () => {
    queue.close();
    for (const slot of live) slot.abort();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  const run = async (index: number, size: SlotSize): Promise<void> => {
    const slot = options.start(index, size);
    live.add(slot);
    // Interrupted before it started (while the binaries were checked): it starts only to write its reports.
    if (signal.aborted) slot.abort();
    const exit = await slot.exited;
    live.delete(slot);
    exits.push({ index, exit });
    const clean = exit.done !== undefined && exit.done.harnessError === undefined;
    if (size.kind === "sized" && clean && !signal.aborted && queue.hasPendingFor("default")) {
      const next = ++lastIndex;
      replaced++;
      options.onReplace?.(next, index);
      await run(next, { kind: "default" });
    }
  };
  try {
    await Promise.all(sizes.map((size, i) => run(i + 1, size)));
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  exits.sort((a, b) => a.index - b.index);
  return { exits, replaced };
}
