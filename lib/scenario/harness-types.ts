// The types of a scenario and of what the harness hands it: the inputs of its expected timeline,
// its definition, the contexts its derive and budgets are called with, the context its run() gets
// and the overrides of its in-process controller. A leaf of lib/scenario/: the pieces runScenario
// (harness.ts) is made of import these rather than harness.ts.
import type {
  ClusterWith,
  EvictionSettings,
  NodeCapability,
  ProviderLatencies,
} from "../cluster/provider.js";
import type { TimingProfile } from "../cluster/profiles.js";
import type { ControllerConfig } from "../controller/config.js";
import type { RecoveryController, RecoveryControllerOptions } from "../controller/controller.js";
import type { BudgetResult } from "../expect/budgets.js";
import type { ExpectedMilestone } from "../expect/windows.js";
import type { FaultInjector } from "../fault/injector.js";
import type { FaultPhaseChoice } from "../fault/phase-choice.js";
import type { k8s } from "../kube/client.js";
import type { Milestone, WorkloadRef } from "../observe/milestones.js";
import type { Transition } from "../observe/types.js";
import type { Progress } from "../util/progress.js";
import type { ScenarioSteps } from "./steps.js";

/** What a scenario's expected timeline depends on (known before any cluster exists, for `rekindle list`). */
export interface ExpectationInputs {
  profile: TimingProfile;
  eviction: EvictionSettings;
  latencies: ProviderLatencies;
  controller: ControllerConfig;
  /** The StatefulSet's volume has an attach step on this provider (see StorageSettings). */
  volumeAttachRequired: boolean;
  /** Tolerance on every bound for scheduling noise (the profile's). */
  slackMs: number;
  /** The window as written, widened by the slack on both sides: how a scenario writes its windows. */
  within(window: ExpectedMilestone): ExpectedMilestone;
  /** kube-controller-manager's log is readable here, so forced detaches are milestones. */
  controllerManagerLogged: boolean;
  /** A node stop leaves the power on here (ClusterUnderTest.stopLeavesPowerOn). Default false. */
  stopLeavesPowerOn?: boolean;
  /** The provider's fence driver hears of power losses (FenceDriver.watchPowerLoss). Default false. */
  powerLossNotices?: boolean;
}

/**
 * A scenario. `R` is what it needs of the cluster: `run` is handed a cluster that has exactly
 * those capabilities (so the compiler, not a runtime refusal, keeps `requires` honest), and a
 * provider without one of them skips the scenario with its reason. Write one with
 * `defineScenario` so `R` is inferred from `requires`.
 */
export interface ScenarioDefinition<R extends NodeCapability = NodeCapability> {
  /** "family/name", the summary.json id. */
  id: string;
  title: string;
  /** Capabilities the provider must have; otherwise the scenario is skipped with its reason. */
  requires: readonly R[];
  /**
   * Runs the recovery controller: its NodeFence CRD is installed before the recorder starts, so
   * NodeFence changes are on the timeline. Default false.
   */
  usesController?: boolean;
  expected(inputs: ExpectationInputs): ExpectedMilestone[];
  /** Workloads whose milestones are derived (`<id>:recovered`…); empty when none. */
  workloads(namespace: string): WorkloadRef[];
  /** Whose recovery is the scenario's headline number; default every workload. */
  recoveryOf?: string[];
  run(context: ScenarioContext<R>): Promise<void>;
  /** One line `rekindle list` prints under the title, e.g. how long the scenario takes. */
  note?(inputs: ExpectationInputs): string;
  /**
   * Where its first fault falls in a control-plane loop that decides what follows it
   * (lib/fault/phase-choice.ts): observed, then waited for right before the fault. Not with a
   * fault phase spread, which samples the phase instead. Default: none chosen.
   */
  faultPhase?: FaultPhaseChoice;
  /** Extra milestones from the recorded transitions (evictions, per-node events…). */
  derive?(transitions: readonly Transition[], context: DeriveContext): Milestone[];
  /**
   * The names of milestones the scenario makes itself, with `mark` or `derive` (a RegExp for a
   * family of names). Anything else it marks or derives is refused, so this list and the
   * recorder's vocabulary (isRecordedMilestoneName) are every name its windows may use.
   */
  ownMilestones?: readonly (string | RegExp)[];
  /**
   * The scenario's budgets (absolute objectives per workload, a scenario file's `budgets`), checked
   * against the judged run beside the windows, usually with checkBudgets (lib/expect/budgets.ts).
   * A missed one fails the scenario with its own verdict line. Called once the fault happened.
   */
  budgets?(context: BudgetContext): BudgetResult[];
  /**
   * The fewest workers the scenario runs on at this profile (zones it carves out of them). When every
   * selected scenario names one, `rekindle run` sizes a sim cluster to the most of them, unless
   * --workers or a scenario file sizes it; a cluster with fewer workers skips the scenario.
   * Default: none named (the scenario is written for the default 3 workers in 2 zones).
   */
  minWorkers?(profile: TimingProfile): number;
  /**
   * How long it watches, after its last bounded window, for what must not happen (its `never`
   * windows), when it does; counted in its expected length, by which `--parallel` orders its queue
   * and sizes its clusters. Default 0.
   */
  watchMs?(inputs: ExpectationInputs): number;
}

/** What a scenario's budgets are checked against: the run as it is judged. */
export interface BudgetContext extends DeriveContext {
  /** The judged milestones, ms since the fault. */
  milestones: readonly Milestone[];
  /** The recorded transitions (epoch ms) up to the end of the scenario's own steps. */
  transitions: readonly Transition[];
  /** The expected timeline the run is judged by (the definition's, or what expectTimeline set). */
  expected: readonly ExpectedMilestone[];
}

export interface DeriveContext {
  faultAtMs: number;
  /** What the expected timeline was computed from (profile, controller settings…). */
  inputs: ExpectationInputs;
  /** The nodes the fault hit, the first one primary. */
  faultNodes: string[];
  namespace: string;
}

export interface ScenarioContext<R extends NodeCapability = never> {
  /** The cluster, with the capabilities the scenario declared (and only those). */
  readonly cluster: ClusterWith<R>;
  readonly kc: k8s.KubeConfig;
  readonly steps: ScenarioSteps;
  readonly namespace: string;
  readonly inputs: ExpectationInputs;
  readonly signal: AbortSignal | undefined;
  readonly progress: Progress;
  /**
   * Node faults as handles (lib/fault/): each registered with this scenario's undos and written to
   * the cluster's fault journal before its first side effect; a fault failing half-way reverts itself.
   */
  readonly faults: FaultInjector;
  /** Marks the fault instant (milestone "fault-injected") on these nodes; call right before injecting. */
  faultStarts(nodes: string[]): void;
  /** Adds a milestone at this instant, e.g. "pressure-relieved". */
  mark(name: string): void;
  /** ms since the fault (0 before it). */
  sinceFaultMs(): number;
  /** Waits for a milestone; the timeout defaults to its expected window's upper bound plus a minute. */
  awaitMilestone(name: string, timeoutMs?: number): Promise<Milestone>;
  milestones(): Milestone[];
  /**
   * Replaces the expected timeline the verdict checks, once the scenario knows what the fault hits
   * (which of a scenario file's workloads had pods on the lost node), and whose recovery is the
   * headline number. Call before the fault.
   */
  expectTimeline(expected: readonly ExpectedMilestone[], recoveryOf?: readonly string[]): void;
  /** The expected timeline the verdict will check (the definition's, or what expectTimeline set). */
  expectedTimeline(): readonly ExpectedMilestone[];
  /** Starts the bundled controller in-process (stopped and its fences released by the undo). */
  startController(options?: ControllerOverrides): Promise<RecoveryController>;
  /** Waits until the node is Ready with a fresh Lease (Ready alone may still read True right after an outage). */
  waitNodeBack(node: string, timeoutMs?: number): Promise<void>;
}

/** What a scenario may change of its in-process controller (ScenarioContext.startController). */
export type ControllerOverrides = Partial<Omit<RecoveryControllerOptions, "kc" | "config">> & {
  config?: Partial<ControllerConfig>;
};
