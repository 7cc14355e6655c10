// Calls made in the same turn of the event loop, joined into one batch call. A fault on a
// thousand nodes "at once" arrives as a thousand concurrent single-node calls; the sim serves
// them best as one batch (bounded patches, one state write), not a thousand racing ones.

/** Runs `run` once for every item added in the same turn; batches run one after another. */
export class Coalescer<T> {
  readonly #run: (items: readonly T[]) => Promise<void>;
  #open: { items: T[]; done: Promise<void> } | undefined;
  /** The batch last started: the next waits for it, so batches never overlap. */
  #tail: Promise<void> = Promise.resolve();

  constructor(run: (items: readonly T[]) => Promise<void>) {
    this.#run = run;
  }

  /** Settles with the batch that carries `item`: its failure is every caller's. */
  add(item: T): Promise<void> {
    if (this.#open === undefined) {
      const items: T[] = [];
      const after = this.#tail;
      const done = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => after.catch(() => undefined))
        .then(() => {
          // Items added from here on go to the next batch.
          if (this.#open?.items === items) this.#open = undefined;
          return this.#run(items);
        });
      this.#open = { items, done };
      this.#tail = done;
    }
    this.#open.items.push(item);
    return this.#open.done;
  }
}
