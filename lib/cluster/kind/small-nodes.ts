// The kind provider's small nodes at run time (what small-node.ts does, in order): shrink a node,
// wait until its kubelet reports the small size, and put it back — memory at once, the kubelet's
// filesystem only after the node's DiskPressure has cleared (its kubelet restarts then, which
// would otherwise end the condition early). Remembers which nodes it touched, for destroy().
import { errorMessage, RekindleError } from "../../errors.js";
import type { Progress } from "../../util/progress.js";
import { pollUntil, sleep } from "../../util/time.js";
import { formatBytes, type EvictionThreshold } from "./quantity.js";
import type { KindNodes } from "./nodes.js";
import {
  restoreMemoryCommand,
  restoreNodefsCommand,
  shrinkMemoryCommand,
  shrinkNodefsCommand,
  shrunkCommand,
  smallMemTotalBytes,
  type SmallNodeSettings,
} from "./small-node.js";
import type { NodeSignalStats } from "./stats.js";

/** Every wait of the small nodes, units in the names. */
export const SMALL_NODE_TIMEOUTS = {
  /** The kubelet's stats show the small MemTotal (cadvisor refreshes the root spec when 5 s old). */
  memorySeenMs: 30_000,
  /** The restarted kubelet serves stats of its new (or old) filesystem. */
  nodefsSeenMs: 90_000,
  /** After relieve: the condition must clear within the transition period plus this. */
  clearedExtraMs: 180_000,
  /** Poll interval for stats and the node's condition. */
  pollMs: 1_000,
} as const;

export interface SmallNodesInit {
  nodes: Pick<KindNodes, "exec" | "run">;
  settings: SmallNodeSettings;
  /** The kubelet's own stats of a node (its /stats/summary). */
  stats: (node: string) => Promise<NodeSignalStats>;
  /** A node condition's status as the API shows it ("True", "False", "Unknown"), if present. */
  condition: (node: string, type: string) => Promise<string | undefined>;
  pressureTransitionPeriodMs: number;
  progress: Progress;
}

interface PendingRestore {
  /** Settles once the filesystem is back (or the attempt failed: error set). */
  done: Promise<{ error?: unknown }>;
  /** Aborted: restore now without waiting for the condition. */
  hurry: AbortController;
}

export class SmallNodes {
  readonly settings: SmallNodeSettings;
  readonly #init: SmallNodesInit;
  readonly #pending = new Map<string, PendingRestore>();
  readonly #touched = new Set<string>();
  #abandoned = false;

  constructor(init: SmallNodesInit) {
    this.#init = init;
    this.settings = init.settings;
  }

  /** Nodes this run shrank (some may be back already). */
  get touched(): string[] {
    return [...this.#touched];
  }

  async #stats(node: string): Promise<NodeSignalStats | undefined> {
    // While the kubelet restarts the API server's proxy cannot reach it: try again.
    return this.#init.stats(node).catch(() => undefined);
  }

  /**
   * Shows node `node` a MemTotal a little over its working set + `threshold` (see small-node.ts)
   * and resolves once the kubelet's memory.available is computed against it.
   */
  async shrinkMemory(
    node: string,
    threshold: EvictionThreshold,
  ): Promise<{ memTotalBytes: number; guard: string }> {
    const stats = await this.#init.stats(node);
    const workingSet = stats.memory.capacityBytes - stats.memory.availableBytes;
    const memTotalBytes = smallMemTotalBytes(workingSet, threshold, this.settings.memoryHeadroomBytes);
    this.#touched.add(node);
    const output = await this.#init.nodes.run(
      node,
      shrinkMemoryCommand(memTotalBytes, memTotalBytes + this.settings.memoryGuardSlackBytes),
      "showing the kubelet a small MemTotal",
    );
    await pollUntil(
      async () => {
        const seen = await this.#stats(node);
        return seen && Math.abs(seen.memory.capacityBytes - memTotalBytes) < 1024 * 1024 ? true : undefined;
      },
      {
        what: `the kubelet of ${node} to report memory capacity ${formatBytes(memTotalBytes)}`,
        timeoutMs: SMALL_NODE_TIMEOUTS.memorySeenMs,
        intervalMs: SMALL_NODE_TIMEOUTS.pollMs,
      },
    );
    return { memTotalBytes, guard: output.trim().split("\n").at(-1) ?? "" };
  }

  /** The node's real meminfo and memory limits again. Idempotent. */
  async restoreMemory(node: string): Promise<void> {
    await this.#init.nodes.run(node, restoreMemoryCommand(), "restoring the node's meminfo and memory limit");
  }

  /**
   * Moves the kubelet's root directory onto a small tmpfs (the kubelet restarts) and resolves once
   * its stats show that filesystem as nodefs. Waits for a pending restore of the node first.
   */
  async shrinkNodefs(node: string): Promise<void> {
    await this.settle(node);
    this.#touched.add(node);
    const bytes = this.settings.nodefsBytes;
    await this.#init.nodes.run(
      node,
      shrinkNodefsCommand(bytes),
      "moving the kubelet onto a small filesystem",
    );
    await this.#awaitNodefs(node, (capacity) => capacity === bytes, `a ${formatBytes(bytes)} nodefs`);
  }

  async #awaitNodefs(node: string, ok: (capacityBytes: number) => boolean, what: string): Promise<void> {
    await pollUntil(
      async () => {
        const seen = await this.#stats(node);
        return seen && ok(seen.disk.capacityBytes) ? true : undefined;
      },
      {
        what: `the kubelet of ${node} to report ${what}`,
        timeoutMs: SMALL_NODE_TIMEOUTS.nodefsSeenMs,
        intervalMs: SMALL_NODE_TIMEOUTS.pollMs,
      },
    );
  }

  /** The kubelet back on its own directory (it restarts) at once. Idempotent. */
  async restoreNodefs(node: string): Promise<void> {
    if ((await this.#init.nodes.exec(node, shrunkCommand("disk"))).exitCode !== 0) return;
    await this.#init.nodes.run(
      node,
      restoreNodefsCommand(),
      "putting the kubelet back on its own filesystem",
    );
    const small = this.settings.nodefsBytes;
    await this.#awaitNodefs(node, (capacity) => capacity !== small, "its own filesystem as nodefs again");
    this.#init.progress.info(`${node}: kubelet back on its own filesystem (kubelet restarted)`);
  }

  /**
   * In the background: waits until `condition` is no longer True on the node and the kubelet's
   * transition period has passed, then restoreNodefs. settle() awaits it.
   */
  restoreNodefsWhenCleared(node: string, condition: string): void {
    if (this.#pending.has(node)) return;
    const hurry = new AbortController();
    const run = async (): Promise<void> => {
      await this.#awaitCleared(node, condition, hurry.signal).catch((error: unknown) => {
        if (!hurry.signal.aborted) {
          this.#init.progress.info(`${node}: ${errorMessage(error)}; putting the kubelet back now`);
        }
      });
      if (!this.#abandoned) await this.restoreNodefs(node);
    };
    const done = run().then(
      () => ({}),
      (error: unknown) => ({ error }),
    );
    this.#pending.set(node, { done, hurry });
  }

  async #awaitCleared(node: string, condition: string, signal: AbortSignal): Promise<void> {
    const transition = this.#init.pressureTransitionPeriodMs;
    await sleep(transition, signal);
    await pollUntil(
      async () => ((await this.#init.condition(node, condition)) === "True" ? undefined : true),
      {
        what: `${condition} to clear on ${node} before the kubelet is put back on its own filesystem`,
        timeoutMs: SMALL_NODE_TIMEOUTS.clearedExtraMs,
        intervalMs: SMALL_NODE_TIMEOUTS.pollMs,
        signal,
      },
    );
  }

  /**
   * Awaits a pending restore of `node` (at once when `hurry`); throws what it failed with.
   * Nothing pending: returns.
   */
  async settle(node: string, options: { hurry?: boolean } = {}): Promise<void> {
    const pending = this.#pending.get(node);
    if (!pending) return;
    if (options.hurry === true) pending.hurry.abort();
    const { error } = await pending.done;
    if (this.#pending.get(node) === pending) this.#pending.delete(node);
    if (error !== undefined) {
      throw error instanceof RekindleError
        ? error
        : new RekindleError("COMMAND_FAILED", `putting node ${node} back failed: ${errorMessage(error)}`, {
            cause: error,
          });
    }
  }

  /** The cluster is going away: pending restores stop where they are (nothing is left to restore). */
  abandon(): void {
    this.#abandoned = true;
    for (const pending of this.#pending.values()) pending.hurry.abort();
  }
}
