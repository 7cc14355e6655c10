// The shared shape of every conformance scenario: deploy, maybe run the recovery
// controller, record, inject the fault (its undo registered right after), await milestones, undo
// everything, then judge the recorded timeline against the scenario's expected windows.
import {
  missingCapabilities,
  type ClusterUnderTest,
  type ClusterWith,
  type EvictionSettings,
  type NodeCapability,
  type ProviderLatencies,
} from "../cluster/provider.js";
import { RekindleError } from "../errors.js";
import type { FaultInjector } from "../fault/injector.js";
import type { FaultPhaseChoice } from "../fault/phase-choice.js";
import type { TimingProfile } from "../cluster/profiles.js";
import { DEFAULT_CONTROLLER_CONFIG, type ControllerConfig } from "../controller/config.js";
import type { RecoveryController } from "../controller/controller.js";
import { installNodeFenceCrd } from "../controller/crd.js";
import type { WindowCheck } from "../expect/assert.js";
import type { BudgetResult } from "../expect/budgets.js";
import { nominalWindows, widened, type ExpectedMilestone } from "../expect/windows.js";
import { k8s } from "../kube/client.js";
import type { Milestone, WorkloadRef } from "../observe/milestones.js";
import { isRecordedMilestoneName } from "../observe/milestone-names.js";
import { TimelineRecorder } from "../observe/recorder.js";
import type { Transition } from "../observe/types.js";
import { volumeWarningLine } from "../observe/volume-warnings.js";
import type { ScenarioRun } from "../report/summary.js";
import { ensureNamespace } from "../workloads/deploy.js";
import { silentProgress, type Progress } from "../util/progress.js";
import { LineTail } from "../util/line-tail.js";
import { CONTROLLER_TAIL_LINES } from "./controller-tail.js";
import { cordonedNodes, leftCordoned } from "./cordon-check.js";
import { isOwnMilestone } from "./own-milestones.js";
import type { ControllerOverrides } from "./scenario-controller.js";
import { scenarioContext, type ScenarioContextParts } from "./scenario-context.js";
import { scenarioBudgets } from "./scenario-budgets.js";
import { ScenarioTimeline } from "./scenario-timeline.js";
import { ScenarioSteps } from "./steps.js";
import { concludeScenario } from "./verdict.js";

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

/** Everything the scenario needs of the cluster: its `requires`, and a fence driver if it runs the controller. */
export function scenarioNeeds(definition: ScenarioDefinition): NodeCapability[] {
  const needs: NodeCapability[] = [...definition.requires];
  if (definition.usesController === true && !needs.includes("fencing")) needs.push("fencing");
  return needs;
}

export { isOwnMilestone };

/** Whether `name` can appear on this scenario's timeline at all. */
export function isProducibleMilestone(
  definition: ScenarioDefinition,
  name: string,
  namespace = "ns",
): boolean {
  const workloadIds = definition.workloads(namespace).map((w) => w.id);
  return isRecordedMilestoneName(name, workloadIds) || isOwnMilestone(definition, name);
}

function needsCapability(definition: ScenarioDefinition, capability: NodeCapability): boolean {
  return definition.requires.includes(capability);
}

/** Infers a scenario's capabilities from its `requires` list. */
export function defineScenario<const R extends NodeCapability = never>(
  definition: ScenarioDefinition<R>,
): ScenarioDefinition<R> {
  return definition;
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

export interface ScenarioRunOptions {
  cluster: ClusterUnderTest;
  /** Namespace for this run (must not exist). */
  namespace: string;
  progress?: Progress;
  signal?: AbortSignal;
  /** A random wait below this (ms) right before the first fault (lib/fault/phase-spread.ts). Default 0. */
  faultPhaseSpreadMs?: number;
}

export interface ScenarioResult extends ScenarioRun {
  expected: ExpectedMilestone[];
  checks: WindowCheck[];
  chart: string;
}

/**
 * The in-process controller's settings: the profile's detection and check interval, and its
 * kube-controller-manager's node-monitor-grace-period (the hold of nodes silent together).
 */
export function scenarioControllerConfig(profile: TimingProfile): ControllerConfig {
  return {
    ...DEFAULT_CONTROLLER_CONFIG,
    ...profile.controller,
    nodeMonitorGracePeriodMs: profile.nodeMonitorGracePeriodSeconds * 1000,
    identity: "rekindle-scenario",
  };
}

/** What the expected timeline needs to know of a cluster (`rekindle list` states it for the sim). */
export interface ExpectationFacts {
  profile: TimingProfile;
  eviction: EvictionSettings;
  latencies: ProviderLatencies;
  volumeAttachRequired: boolean;
  controllerManagerLogged: boolean;
  stopLeavesPowerOn?: boolean;
  powerLossNotices?: boolean;
}

export function expectationInputs(facts: ExpectationFacts): ExpectationInputs {
  const slackMs = facts.profile.slackMs;
  return {
    ...facts,
    controller: scenarioControllerConfig(facts.profile),
    slackMs,
    within: (window) => widened(window, slackMs),
  };
}

/** The expectation facts of a cluster under test. */
export function clusterExpectationInputs(cluster: ClusterUnderTest): ExpectationInputs {
  return expectationInputs({
    profile: cluster.profile,
    eviction: cluster.eviction,
    latencies: cluster.latencies,
    volumeAttachRequired: cluster.storage?.attachRequired ?? true,
    controllerManagerLogged: cluster.capabilities["controller-manager-flags"] !== undefined,
    stopLeavesPowerOn: cluster.stopLeavesPowerOn === true,
    powerLossNotices: cluster.capabilities.fencing?.fenceDriver().watchPowerLoss !== undefined,
  });
}

/** The capable cluster: the one given, if it has every capability the scenario requires. */
function capableCluster<R extends NodeCapability>(
  definition: ScenarioDefinition<R>,
  given: ClusterUnderTest,
): ClusterWith<R> {
  const capable = missingCapabilities(given, definition.requires);
  if (!capable.ok) {
    throw new RekindleError(
      "UNSUPPORTED",
      `${definition.id} needs ${capable.missing.map((m) => m.capability).join(", ")}, which the ${given.provider} provider lacks`,
      { hint: capable.missing.map((m) => `${m.capability}: ${m.reason}`).join("; ") },
    );
  }
  return capable.cluster;
}

/** The opening every scenario shares: its namespace (deleted by the undo), the CRD, the recorder. */
async function openScenario<R extends NodeCapability>(parts: ScenarioContextParts<R>): Promise<void> {
  const { definition, cluster, kc, steps, namespace, progress } = parts;
  await steps.step(`create namespace ${namespace}`, () => ensureNamespace(kc, namespace, cluster.runId));
  steps.registerUndo(`delete namespace ${namespace}`, async () => {
    await kc
      .makeApiClient(k8s.CoreV1Api)
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  // The in-cluster controller's manifests bring the CRD too, but only after the recorder starts.
  if (definition.usesController === true || needsCapability(definition, "in-cluster-controller")) {
    await steps.step("install the NodeFence CRD", () => installNodeFenceCrd(kc));
  }
  parts.timeline.recorder = await steps.step("start the timeline recorder", () =>
    TimelineRecorder.start(kc, {
      // The scenario's namespace, and any other its workloads live in (workloads already deployed).
      namespaces: [...new Set([namespace, ...definition.workloads(namespace).map((w) => w.namespace)])],
      // Nodes nothing concerns renew as counts; the fault's nodes are focused by faultStarts.
      countBackground: true,
      onTransition: (transition) => {
        const warning = volumeWarningLine(transition);
        if (warning !== undefined) progress.info(`${definition.id}: [event] ${warning}`);
      },
    }),
  );
}

/**
 * Opens the scenario, runs it, then undoes everything it registered (always) and stops the
 * recorder. Returns its failure (the first: the run's, else the undo's) and when its own steps ended.
 */
async function runThenUndo<R extends NodeCapability>(
  parts: ScenarioContextParts<R>,
): Promise<{ failure: unknown; observedUntilMs: number }> {
  let failure: unknown;
  let observedUntilMs = 0;
  let cordonedBefore: Set<string> | undefined;
  try {
    cordonedBefore = await cordonedNodes(parts.kc);
    await openScenario(parts);
    await parts.definition.run(scenarioContext(parts));
    observedUntilMs = Date.now();
  } catch (error) {
    failure = error;
    observedUntilMs = Date.now();
  } finally {
    try {
      await parts.steps.undoAll();
      if (cordonedBefore !== undefined)
        failure ??= leftCordoned(
          parts.definition.id,
          cordonedBefore,
          await cordonedNodes(parts.kc),
          parts.timeline.faultNodes,
        );
    } catch (error) {
      failure ??= error;
    }
    await parts.timeline.recorder?.stop();
  }
  return { failure, observedUntilMs };
}

/** Runs a scenario on a cluster that has what it requires, and judges its timeline. */
export async function runScenario<R extends NodeCapability>(
  definition: ScenarioDefinition<R>,
  options: ScenarioRunOptions,
): Promise<ScenarioResult> {
  const { namespace, signal } = options;
  const cluster = capableCluster(definition, options.cluster);
  const progress = options.progress ?? silentProgress;
  await options.cluster.settle?.(signal);
  const inputs = clusterExpectationInputs(cluster);
  const expected = definition.expected(inputs);
  const parts: ScenarioContextParts<R> = {
    definition,
    given: options.cluster,
    cluster,
    kc: cluster.kubeConfig(),
    steps: new ScenarioSteps(definition.id, progress),
    namespace,
    inputs,
    signal,
    progress,
    // Reads kube-controller-manager's log from the scenario's start on, where the provider has it here.
    timeline: new ScenarioTimeline(
      definition,
      namespace,
      inputs,
      options.cluster.capabilities["controller-manager-flags"]?.controllerManagerLogPath(),
    ),
    expected,
    recoveryOf: definition.recoveryOf,
    nominal: nominalWindows(expected),
    controllerTail: new LineTail(CONTROLLER_TAIL_LINES),
    faultPhaseSpreadMs: options.faultPhaseSpreadMs ?? 0,
  };
  const ran = await runThenUndo(parts);
  const milestones = parts.timeline.observedUntil(ran.observedUntilMs);
  const budgets = scenarioBudgets(
    definition,
    parts.timeline,
    milestones,
    ran.observedUntilMs,
    parts.expected,
  );
  const verdict = await concludeScenario({
    title: definition.id,
    subtitle: `profile ${cluster.profile.name}, ${cluster.provider}, fault on ${parts.timeline.faultNodes.join(", ") || "?"}`,
    expected: parts.expected,
    milestones,
    failure: ran.failure ?? budgets.failure,
    ...(budgets.results !== undefined ? { budgets: budgets.results } : {}),
    recoveryOf: parts.recoveryOf ?? definition.workloads(namespace).map((w) => w.id),
    zoneSizes: parts.timeline.zoneSizes(),
  });
  return { ...verdict, expected: [...parts.expected] };
}
