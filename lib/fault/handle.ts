// A fault in progress as a handle: it is created (and registered for undo, and journalled) before
// its first side effect, records per node what was applied as it happens, and reverts exactly that,
// newest first. A fault that fails on a node reverts what it had applied and rethrows.
import { checkRailsNode } from "../cluster/existing/rails.js";
import type { FaultRails } from "../cluster/provider.js";
import { errorMessage, RekindleError, toError } from "../errors.js";
import { silentProgress, type Progress } from "../util/progress.js";
import type { FaultActuator } from "./actuator.js";
import type { FaultJournal } from "./journal.js";
import { describeAction, type FaultNode, type FaultRecord } from "./types.js";

export interface FaultHandleInit {
  /** The record as it starts (no nodes yet); the handle keeps it up to date. */
  record: FaultRecord;
  actuator: FaultActuator;
  /** undefined: no journal (the cluster names no way back to its nodes, or a unit test). */
  journal: FaultJournal | undefined;
  progress?: Progress;
  /** Nodes this fault may hit at all (an existing cluster's --allow-faults); others are refused before anything. */
  rails?: FaultRails;
  /** Called once, right before the first side effect on any node (a scenario marks its fault instant). */
  onFirstEffect?: () => void;
  now?: () => number;
}

export interface ApplyOptions {
  /** Hit every node at once (a zone lost together) instead of one after the other. Default false. */
  concurrent?: boolean;
}

export interface RevertOptions {
  /** Called once every node is reverted, before the journal record is removed (a scenario's mark). */
  onReverted?: () => void;
}

export class FaultHandle implements AsyncDisposable {
  readonly #record: FaultRecord;
  readonly #actuator: FaultActuator;
  readonly #journal: FaultJournal | undefined;
  readonly #progress: Progress;
  readonly #now: () => number;
  readonly #rails: FaultRails | undefined;
  #onFirstEffect: (() => void) | undefined;
  #reverting: Promise<void> | undefined;
  /** Reverted and its record removed: nothing left to do. */
  #done = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(init: FaultHandleInit) {
    this.#record = { ...init.record, nodes: [...init.record.nodes] };
    this.#actuator = init.actuator;
    this.#journal = init.journal;
    this.#progress = init.progress ?? silentProgress;
    this.#onFirstEffect = init.onFirstEffect;
    this.#now = init.now ?? Date.now;
    this.#rails = init.rails;
  }

  /** The second wall behind workerNodes(): no node outside the rails, no more than their maximum. */
  #checkRails(nodes: readonly string[]): void {
    const rails = this.#rails;
    if (rails === undefined) return;
    for (const node of nodes) checkRailsNode(rails, node);
    const hit = new Set([
      ...this.#record.nodes.filter((n) => n.state !== "reverted").map((n) => n.name),
      ...nodes,
    ]);
    if (hit.size > rails.maxNodes)
      throw new RekindleError(
        "INVALID_INPUT",
        `a ${this.what} of ${[...hit].join(", ")} would fault ${hit.size} nodes, more than --max-faulted-nodes ${rails.maxNodes}`,
        { hint: "raise --max-faulted-nodes if that many may go at once" },
      );
  }

  get id(): string {
    return this.#record.id;
  }

  /** What is done, e.g. "partition". */
  get what(): string {
    return describeAction(this.#record.action);
  }

  /** The instant by which this fault is reverted at the latest. */
  get deadline(): Date {
    return new Date(this.#record.deadline);
  }

  /** Per node, what was applied (and reverted) so far, in the order applied. */
  get nodes(): readonly FaultNode[] {
    return this.#record.nodes.map((n) => ({ ...n }));
  }

  /** The journal record as it stands. */
  get record(): FaultRecord {
    return { ...this.#record, nodes: this.nodes as FaultNode[] };
  }

  /**
   * Writes the record before anything is applied, and arms the in-process deadline: a fault still
   * applied then is reverted by this process (the journal and `rekindle reap` cover its death).
   */
  async open(): Promise<void> {
    await this.#journal?.write(this.record);
    const left = Date.parse(this.#record.deadline) - this.#now();
    this.#timer = setTimeout(
      () => {
        this.#progress.info(
          `fault ${this.id} (${this.what}) reached its deadline ${this.#record.deadline}: reverting it`,
        );
        this.revert().catch((error: unknown) => {
          this.#progress.info(`fault ${this.id}: revert at the deadline failed: ${errorMessage(error)}`);
        });
      },
      Math.max(0, left),
    );
    this.#timer.unref();
  }

  #mark(node: string, state: FaultNode["state"]): void {
    const at = new Date(this.#now()).toISOString();
    const index = this.#record.nodes.findIndex((n) => n.name === node);
    if (index < 0) this.#record.nodes.push({ name: node, state, at });
    else this.#record.nodes[index] = { name: node, state, at };
  }

  #firstEffect(): void {
    const first = this.#onFirstEffect;
    this.#onFirstEffect = undefined;
    first?.();
  }

  /**
   * Applies the fault to `nodes` (one after the other, or at once), recording each node before its
   * side effect. If any fails, every node applied so far (and the one that failed) is reverted and
   * a RekindleError is thrown with the original as its cause.
   */
  async apply(nodes: readonly string[], options: ApplyOptions = {}): Promise<void> {
    if (this.#reverting !== undefined || this.#done) {
      throw new RekindleError("CONFLICT", `fault ${this.id} (${this.what}) is reverted; begin a new fault`);
    }
    try {
      this.#checkRails(nodes);
    } catch (error) {
      // Refused before any side effect on these nodes: undo the rest as any failure does, record included.
      await this.revert().catch(() => undefined);
      throw error;
    }
    if (options.concurrent === true) return this.#applyTogether(nodes);
    for (const node of nodes) {
      this.#mark(node, "applying");
      try {
        await this.#journal?.write(this.record);
        if (this.#actuator.effectAfterSetup !== true) this.#firstEffect();
        await this.#actuator.apply(node, this.deadline, () => {
          this.#firstEffect();
        });
        // An actuator that set up first and never said when: its return is the latest time zero.
        this.#firstEffect();
        this.#mark(node, "applied");
        await this.#journal?.write(this.record);
      } catch (error) {
        throw await this.#failed(node, error);
      }
    }
  }

  async #applyTogether(nodes: readonly string[]): Promise<void> {
    for (const node of nodes) this.#mark(node, "applying");
    try {
      await this.#journal?.write(this.record);
    } catch (error) {
      throw await this.#failed(nodes[0] ?? "", error);
    }
    if (this.#actuator.effectAfterSetup !== true) this.#firstEffect();
    const results = await Promise.allSettled(
      nodes.map((node) =>
        this.#actuator.apply(node, this.deadline, () => {
          this.#firstEffect();
        }),
      ),
    );
    this.#firstEffect();
    results.forEach((result, i) => {
      if (result.status === "fulfilled") this.#mark(nodes[i] ?? "", "applied");
    });
    const failed = results.findIndex((r) => r.status === "rejected");
    const failure = results[failed];
    if (failure?.status === "rejected") throw await this.#failed(nodes[failed] ?? "", failure.reason);
    try {
      await this.#journal?.write(this.record);
    } catch (error) {
      throw await this.#failed(nodes[0] ?? "", error);
    }
  }

  /** Reverts what was applied after a failure on `node`; the error to throw says what happened. */
  async #failed(node: string, error: unknown): Promise<RekindleError> {
    const applied = this.#record.nodes.filter((n) => n.state !== "reverted").map((n) => n.name);
    let undone = `reverted ${applied.join(", ") || "nothing (none was applied)"}`;
    try {
      await this.revert();
    } catch (revertError) {
      undone = `reverting ${applied.join(", ")} failed too: ${errorMessage(revertError)}; \`rekindle reap\` retries it from the journal`;
    }
    const original = toError(error);
    return new RekindleError(
      original instanceof RekindleError ? original.code : "HARNESS_FAILED",
      `${this.what} of ${node} failed: ${original.message} (${undone})`,
      {
        cause: original,
        ...(original instanceof RekindleError && original.hint !== undefined ? { hint: original.hint } : {}),
        details: { fault: this.id, node, reverted: applied },
      },
    );
  }

  /**
   * Reverts every node not reverted yet, newest first, then removes the journal record. Idempotent:
   * once done it does nothing; after a failure a second call retries what is still applied.
   */
  revert(options: RevertOptions = {}): Promise<void> {
    if (this.#done) return Promise.resolve();
    this.#reverting ??= this.#revertNow(options).finally(() => {
      this.#reverting = undefined;
    });
    return this.#reverting;
  }

  async #revertNow(options: RevertOptions): Promise<void> {
    clearTimeout(this.#timer);
    const failures: { node: string; error: unknown }[] = [];
    for (const node of [...this.#record.nodes].reverse()) {
      if (node.state === "reverted") continue;
      try {
        await this.#actuator.revert(node.name);
        this.#mark(node.name, "reverted");
      } catch (error) {
        failures.push({ node: node.name, error });
      }
    }
    const first = failures[0];
    if (first !== undefined) {
      await this.#journal?.write(this.record).catch(() => undefined);
      throw new RekindleError(
        "HARNESS_FAILED",
        `reverting the ${this.what} (fault ${this.id}) failed on ${failures.map((f) => f.node).join(", ")}: ${errorMessage(first.error)}`,
        {
          cause: first.error,
          hint: "its journal record stays; `rekindle reap` retries it",
          details: { fault: this.id, failed: failures.map((f) => f.node) },
        },
      );
    }
    options.onReverted?.();
    await this.#journal?.remove(this.id);
    this.#done = true;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.revert();
  }
}
