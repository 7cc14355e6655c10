// Runs one task per item with at most `limit` under way at once: a slow or hanging task holds up
// only its own slot, never the items behind it while other slots are free.

/**
 * Calls `task` for every item, in the items' order, with at most `limit` (at least 1) running at
 * once; resolves when every task has settled. A task that throws does not stop the others: the
 * first error is thrown once all have settled.
 */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const slot = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      try {
        await task(item);
      } catch (error) {
        errors.push(error);
      }
    }
  };
  const slots = Math.max(1, Math.min(Math.floor(limit), items.length));
  await Promise.all(Array.from({ length: slots }, slot));
  if (errors.length > 0) throw errors[0];
}

/**
 * Tasks run in the background, in the order pushed, at most `limit` at once; the pusher does not
 * wait. A task's failure is its own to report: it is swallowed here. `settle()` waits until none
 * is under way or waiting (those pushed meanwhile included).
 */
export class BackgroundTasks {
  readonly #limit: number;
  readonly #waiting: (() => Promise<unknown>)[] = [];
  readonly #running = new Set<Promise<unknown>>();

  constructor(limit: number) {
    this.#limit = Math.max(1, Math.floor(limit));
  }

  push(task: () => Promise<unknown>): void {
    this.#waiting.push(task);
    this.#pump();
  }

  /** Tasks under way or waiting. */
  get size(): number {
    return this.#running.size + this.#waiting.length;
  }

  async settle(): Promise<void> {
    while (this.size > 0) await Promise.allSettled([...this.#running]);
  }

  #pump(): void {
    while (this.#running.size < this.#limit) {
      const task = this.#waiting.shift();
      if (task === undefined) return;
      const running: Promise<unknown> = task()
        .catch(() => undefined)
        .finally(() => {
          this.#running.delete(running);
          this.#pump();
        });
      this.#running.add(running);
    }
  }
}
