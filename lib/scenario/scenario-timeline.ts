// One scenario run's timeline: the fault instant and nodes, the scenario's own marks, the recorder,
// and the milestones computed from them (base, forced detaches from kube-controller-manager's log,
// marks, the scenario's derive), in time order.
import { ForcedDetachLog } from "../observe/forced-detach.js";
import type { Milestone } from "../observe/milestones.js";
import type { TimelineRecorder } from "../observe/recorder.js";
import type { Transition } from "../observe/types.js";
import { baseMilestones } from "./base-milestones.js";
import type { DeriveContext, ExpectationInputs, ScenarioDefinition } from "./harness.js";
import { isOwnMilestone, undeclaredMilestone } from "./own-milestones.js";

export class ScenarioTimeline {
  /** Date.now() at the fault; 0 before it. */
  faultAtMs = 0;
  /** The nodes the fault hit, the first one primary. */
  faultNodes: string[] = [];
  recorder: TimelineRecorder | undefined;
  private readonly marks: Milestone[] = [];
  private readonly controllerManagerLog: ForcedDetachLog;

  /** Reads kube-controller-manager's log (when the provider has it on this machine) from now on. */
  constructor(
    private readonly definition: ScenarioDefinition,
    private readonly namespace: string,
    private readonly inputs: ExpectationInputs,
    controllerManagerLogPath: string | undefined,
  ) {
    this.controllerManagerLog = new ForcedDetachLog(controllerManagerLogPath);
  }

  faultStarts(nodes: string[]): void {
    this.faultAtMs = Date.now();
    this.faultNodes = nodes;
  }

  mark(name: string): void {
    if (!isOwnMilestone(this.definition, name)) throw undeclaredMilestone(this.definition, name);
    this.marks.push({ name, atMs: Date.now() - this.faultAtMs });
  }

  sinceFaultMs(): number {
    return this.faultAtMs === 0 ? 0 : Date.now() - this.faultAtMs;
  }

  /** Every milestone so far. */
  milestones(): Milestone[] {
    return this.milestonesOf(this.recorder?.transitions ?? []);
  }

  /**
   * What is judged: the milestones up to the end of the scenario's own steps (the undo is not
   * judged), plus the node coming back during the undo, which is reported.
   */
  observedUntil(observedUntilMs: number): Milestone[] {
    const observed = this.milestonesOf(this.transitionsUntil(observedUntilMs), observedUntilMs);
    const readyAgain = this.milestonesOf(this.recorder?.transitions ?? []).find(
      (m) => m.name === "node-ready-again",
    );
    if (readyAgain && !observed.some((m) => m.name === "node-ready-again")) observed.push(readyAgain);
    return observed;
  }

  /** The recorded transitions up to the end of the scenario's own steps (the undo's are not judged). */
  transitionsUntil(observedUntilMs: number): Transition[] {
    return (this.recorder?.transitions ?? []).filter((t) => t.atMs <= observedUntilMs);
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

  private milestonesOf(transitions: readonly Transition[], untilMs = Infinity): Milestone[] {
    if (this.faultAtMs === 0) return [];
    return [
      ...baseMilestones(this.definition, transitions, this.deriveContext()),
      ...this.controllerManagerLog.milestones(this.faultAtMs, this.faultNodes[0] ?? "", untilMs),
      ...this.marks,
      ...this.derived(transitions),
    ].sort((a, b) => a.atMs - b.atMs);
  }

  /** The scenario's own derived milestones, each one it declared. */
  private derived(transitions: readonly Transition[]): Milestone[] {
    const out = this.definition.derive?.(transitions, this.deriveContext()) ?? [];
    const stray = out.find((m) => !isOwnMilestone(this.definition, m.name));
    if (stray) throw undeclaredMilestone(this.definition, stray.name);
    return out;
  }
}
