// One scenario run's timeline: the fault instant and nodes, the scenario's own marks, the recorder,
// and the milestones computed from them (base, forced detaches from kube-controller-manager's log,
// zone states from the same log, marks, the scenario's derive), in time order. What is derived from transitions is cached: it is
// derived again only once the recorder stored something new or the fault changed (a recorder
// that counts the background stores nothing while the cluster is at rest). Waiters subscribe and
// are woken by each stored transition, mark and fault instead of polling.
import { ForcedDetachLog } from "../observe/forced-detach.js";
import { ZoneStateLog } from "../observe/zone-states.js";
import { nodeOfQualified, qualifiedMilestone } from "../observe/milestone-names.js";
import type { Milestone } from "../observe/milestones.js";
import type { TimelineRecorder } from "../observe/recorder.js";
import {
  TransitionLog,
  untilTime,
  type TransitionHistory,
  type TransitionIndex,
} from "../observe/transition-log.js";
import type { Transition } from "../observe/types.js";
import { baseMilestones } from "./base-milestones.js";
import type { DeriveContext, ExpectationInputs, ScenarioDefinition } from "./harness-types.js";
import { isOwnMilestone, undeclaredMilestone } from "./own-milestones.js";

/** How often a waiter reads kube-controller-manager's log (a file: nothing announces its lines). */
const CONTROLLER_MANAGER_LOG_EVERY_MS = 1_000;

export class ScenarioTimeline {
  /** Date.now() at the fault; 0 before it. */
  faultAtMs = 0;
  /** The nodes the fault hit, the first one primary. */
  faultNodes: string[] = [];
  #recorder: TimelineRecorder | undefined;
  private readonly marks: Milestone[] = [];
  private readonly controllerManagerLog: ForcedDetachLog;
  private readonly zoneStates: ZoneStateLog;
  readonly #listeners = new Set<() => void>();
  #cached: { key: string; milestones: Milestone[] } | undefined;
  /** Each node's zone when the fault started (the zone scenarios relabel nodes before it, and back after). */
  #zonesAtFault: ReadonlyMap<string, string> = new Map();
  #derivations = 0;

  /** Reads kube-controller-manager's log (when the provider has it on this machine) from now on. */
  constructor(
    private readonly definition: ScenarioDefinition,
    private readonly namespace: string,
    private readonly inputs: ExpectationInputs,
    controllerManagerLogPath: string | undefined,
  ) {
    this.controllerManagerLog = new ForcedDetachLog(controllerManagerLogPath);
    this.zoneStates = new ZoneStateLog(controllerManagerLogPath);
  }

  get recorder(): TimelineRecorder | undefined {
    return this.#recorder;
  }

  set recorder(recorder: TimelineRecorder | undefined) {
    this.#recorder = recorder;
    this.#cached = undefined;
  }

  /** How many times the milestones were derived from the transitions (not served from the cache). */
  get derivations(): number {
    return this.#derivations;
  }

  faultStarts(nodes: string[]): void {
    this.faultAtMs = Date.now();
    this.faultNodes = nodes;
    this.#zonesAtFault = this.#recorder?.zones() ?? new Map();
    this.#recorder?.focus(nodes);
    this.#wake();
  }

  mark(name: string): void {
    if (!isOwnMilestone(this.definition, name)) throw undeclaredMilestone(this.definition, name);
    this.marks.push({ name, atMs: Date.now() - this.faultAtMs });
    this.#wake();
  }

  sinceFaultMs(): number {
    return this.faultAtMs === 0 ? 0 : Date.now() - this.faultAtMs;
  }

  /**
   * Calls `wake` whenever the milestones may have changed: a transition stored, a mark, the fault;
   * and every second while kube-controller-manager's log is followed. Returns its removal.
   */
  subscribe(wake: () => void): () => void {
    this.#listeners.add(wake);
    const fromRecorder = this.#recorder?.subscribe(() => {
      wake();
    });
    const timer = this.controllerManagerLog.followed
      ? setInterval(wake, CONTROLLER_MANAGER_LOG_EVERY_MS)
      : undefined;
    return () => {
      this.#listeners.delete(wake);
      fromRecorder?.();
      if (timer) clearInterval(timer);
    };
  }

  /** Every milestone so far. */
  milestones(): Milestone[] {
    if (this.faultAtMs === 0) return [];
    const index = this.#index();
    const key = `${index.generation}:${this.faultAtMs}:${this.faultNodes.join(",")}`;
    if (this.#cached?.key !== key) this.#cached = { key, milestones: this.#fromTransitions(index) };
    return this.#combine(this.#cached.milestones);
  }

  /**
   * What is judged: the milestones up to the end of the scenario's own steps (the undo is not
   * judged), plus the node coming back during the undo, which is reported.
   */
  observedUntil(observedUntilMs: number): Milestone[] {
    if (this.faultAtMs === 0) return [];
    const index = this.#index();
    const observed = this.#combine(this.#fromTransitions(index.until(observedUntilMs)), observedUntilMs);
    const readyAgain = this.milestones().find((m) => m.name === "node-ready-again");
    if (readyAgain && !observed.some((m) => m.name === "node-ready-again")) observed.push(readyAgain);
    return observed;
  }

  /** The recorded transitions up to the end of the scenario's own steps (the undo's are not judged). */
  transitionsUntil(observedUntilMs: number): readonly Transition[] {
    return untilTime(this.#index().all, observedUntilMs);
  }

  /** What `derive` and `budgets` are told of the run. */
  deriveContext(): DeriveContext {
    return {
      faultAtMs: this.faultAtMs,
      faultNodes: this.faultNodes,
      namespace: this.namespace,
      inputs: this.inputs,
    };
  }

  #index(): TransitionHistory {
    return this.#recorder?.index ?? EMPTY;
  }

  #wake(): void {
    for (const wake of this.#listeners) wake();
  }

  /** The milestones derived from transitions: base, and the scenario's derive. */
  #fromTransitions(index: TransitionIndex): Milestone[] {
    this.#derivations += 1;
    return [...baseMilestones(this.definition, index, this.deriveContext()), ...this.derived(index.all)];
  }

  /** With the forced detaches and zone states read from the log and the marks, in time order. */
  #combine(fromTransitions: readonly Milestone[], untilMs = Infinity): Milestone[] {
    const [first, ...others] = this.faultNodes;
    const detaches = this.controllerManagerLog.milestones(this.faultAtMs, first ?? "", untilMs);
    if (others.length > 0) {
      for (const node of this.faultNodes) {
        for (const m of this.controllerManagerLog.milestones(this.faultAtMs, node, untilMs))
          detaches.push({ ...m, name: qualifiedMilestone(m.name, node) });
      }
    }
    const zones = this.zoneStates.milestones(this.faultAtMs, untilMs);
    return [...this.#withZones([...fromTransitions, ...detaches]), ...zones, ...this.marks].sort(
      (a, b) => a.atMs - b.atMs,
    );
  }

  /** Milestones of a node with its zone at the fault, where it had one (the chart groups by it). */
  #withZones(milestones: readonly Milestone[]): Milestone[] {
    return milestones.map((m) => {
      const node = m.node ?? nodeOfQualified(m.name);
      const zone = node === undefined ? undefined : this.#zonesAtFault.get(node);
      return zone === undefined || zone === "" || m.zone !== undefined ? m : { ...m, zone };
    });
  }

  /** How many nodes each zone had when the fault started (labelled nodes only). */
  zoneSizes(): Record<string, number> {
    const sizes: Record<string, number> = {};
    for (const zone of this.#zonesAtFault.values()) if (zone !== "") sizes[zone] = (sizes[zone] ?? 0) + 1;
    return sizes;
  }

  /** The scenario's own derived milestones, each one it declared. */
  private derived(transitions: readonly Transition[]): Milestone[] {
    const out = this.definition.derive?.(transitions, this.deriveContext()) ?? [];
    const stray = out.find((m) => !isOwnMilestone(this.definition, m.name));
    if (stray) throw undeclaredMilestone(this.definition, stray.name);
    return out;
  }
}

const EMPTY = new TransitionLog();
