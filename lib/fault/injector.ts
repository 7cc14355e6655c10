// Where faults begin: a handle is made, registered with the scenario's undo registry and written
// to the journal, all before the fault's first side effect. Scenarios and scenario files inject
// every node fault through here (lib/scenario's context carries one per scenario).
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { CapabilityMap, FaultRails, NodeFaultLocator } from "../cluster/provider.js";
import { RekindleError } from "../errors.js";
import type { Progress } from "../util/progress.js";
import { capabilityActuator, type FaultActuator } from "./actuator.js";
import { FaultHandle, type ApplyOptions } from "./handle.js";
import type { FaultJournal } from "./journal.js";
import { runIdLabel } from "./record-codec.js";
import { describeAction, FAULT_DEADLINES, type FaultAction, type FaultHolder } from "./types.js";

/** Where undos go (ScenarioSteps is one): run newest first when the scenario ends. */
export interface UndoRegistry {
  registerUndo(name: string, run: () => Promise<void>): void;
}

export interface FaultSpec {
  action: FaultAction;
  /**
   * How long the fault is meant to last, when it has a duration (a partition healed after 20 s):
   * the deadline is then this plus FAULT_DEADLINES.marginMs. Default: none.
   */
  durationMs?: number;
  /** The deadline from now, overriding the one from durationMs. Default FAULT_DEADLINES.defaultMs. */
  deadlineMs?: number;
  /** Called right before the first side effect (a scenario marks its fault instant there). */
  onFirstEffect?: () => void;
  /** The nodes it is about to hit, for the undo's name only (apply says which it hits). */
  nodesHint?: readonly string[];
}

export interface FaultInjectorOptions {
  capabilities: Partial<CapabilityMap>;
  runId: string;
  undo: UndoRegistry;
  /** Where records go; undefined: none (a cluster without a locator, a unit test). */
  journal?: FaultJournal;
  /** How a later process reaches the nodes; needed with a journal. */
  locator?: NodeFaultLocator;
  progress?: Progress;
  /** The nodes faults may hit (an existing cluster's --allow-faults). Default: any. */
  rails?: FaultRails;
  /** The process that holds the faults. Default this one (its host name and pid). */
  holder?: FaultHolder;
  /** Builds the actuator (tests inject failures here). Default capabilityActuator. */
  actuator?: (action: FaultAction, capabilities: Partial<CapabilityMap>) => FaultActuator;
  now?: () => number;
  /** Awaited once, right before the first fault inject() applies (a run's fault phase spread; begin() skips it). */
  beforeFirstApply?: () => Promise<void>;
}

/** The deadline in ms from now: from the duration (plus a margin), else the default; never past the max. */
export function faultDeadlineMs(spec: Pick<FaultSpec, "durationMs" | "deadlineMs">): number {
  const ms =
    spec.deadlineMs ??
    (spec.durationMs !== undefined ? spec.durationMs + FAULT_DEADLINES.marginMs : FAULT_DEADLINES.defaultMs);
  if (!Number.isFinite(ms) || ms <= 0 || ms > FAULT_DEADLINES.maxMs) {
    throw new RekindleError(
      "INVALID_INPUT",
      `a fault's deadline of ${ms} ms is out of range; valid: above 0 and at most ${FAULT_DEADLINES.maxMs} ms`,
      { hint: "a fault longer than an hour is not a test any more; split it" },
    );
  }
  return ms;
}

export class FaultInjector {
  readonly #options: FaultInjectorOptions;
  #count = 0;
  #beforeFirstApply: (() => Promise<void>) | undefined;

  constructor(options: FaultInjectorOptions) {
    if (options.journal !== undefined && options.locator === undefined) {
      throw new RekindleError("INTERNAL", "a fault journal needs a locator to say how to revert");
    }
    this.#options = options;
    this.#beforeFirstApply = options.beforeFirstApply;
  }

  #newId(): string {
    this.#count += 1;
    const run = runIdLabel(this.#options.runId)
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, "-")
      .slice(0, 40);
    return `fault-${run}-${this.#count}-${randomBytes(3).toString("hex")}`.replace(/-+/g, "-");
  }

  /**
   * A handle for a fault about to be applied: registered for undo first, then journalled. Nothing
   * is applied yet; `apply` does that.
   */
  async begin(spec: FaultSpec): Promise<FaultHandle> {
    const { capabilities, runId, undo, journal, locator, progress } = this.#options;
    const now = this.#options.now ?? Date.now;
    const railsDeadline = this.#options.rails?.deadlineMs;
    const deadlineMs = faultDeadlineMs(
      spec.deadlineMs === undefined && spec.durationMs === undefined && railsDeadline !== undefined
        ? { deadlineMs: railsDeadline }
        : spec,
    );
    const actuator = (this.#options.actuator ?? capabilityActuator)(spec.action, capabilities);
    const handle = new FaultHandle({
      record: {
        id: this.#newId(),
        runId,
        action: spec.action,
        nodes: [],
        appliedAt: new Date(now()).toISOString(),
        deadline: new Date(now() + deadlineMs).toISOString(),
        // Unused without a journal; a record always names one.
        locator: locator ?? { provider: "sim", root: "" },
        holder: this.#options.holder ?? { host: hostname(), pid: process.pid },
      },
      actuator,
      journal,
      ...(progress ? { progress } : {}),
      ...(this.#options.rails ? { rails: this.#options.rails } : {}),
      ...(spec.onFirstEffect ? { onFirstEffect: spec.onFirstEffect } : {}),
      now,
    });
    const on = spec.nodesHint && spec.nodesHint.length > 0 ? ` on ${spec.nodesHint.join(", ")}` : "";
    undo.registerUndo(`revert the ${describeAction(spec.action)}${on}`, () => handle.revert());
    await handle.open();
    return handle;
  }

  /** begin, then apply to `nodes`: a failure on any node reverts every node hit and rethrows. */
  async inject(spec: FaultSpec & { nodes: readonly string[] } & ApplyOptions): Promise<FaultHandle> {
    const handle = await this.begin({ ...spec, nodesHint: spec.nodesHint ?? spec.nodes });
    const before = this.#beforeFirstApply;
    this.#beforeFirstApply = undefined;
    await before?.();
    await handle.apply(spec.nodes, spec.concurrent === true ? { concurrent: true } : {});
    return handle;
  }
}
