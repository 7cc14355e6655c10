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
import type { TimingProfile } from "../cluster/profiles.js";
import { DEFAULT_CONTROLLER_CONFIG, type ControllerConfig } from "../controller/config.js";
import { installNodeFenceCrd } from "../controller/crd.js";
import type { WindowCheck } from "../expect/assert.js";
import { nominalWindows, widened, type ExpectedMilestone } from "../expect/windows.js";
import { k8s } from "../kube/client.js";
import { isRecordedMilestoneName } from "../observe/milestone-names.js";
import { TimelineRecorder } from "../observe/recorder.js";
import { volumeWarningLine } from "../observe/volume-warnings.js";
import type { ScenarioRun } from "../report/summary-types.js";
import { ensureNamespace } from "../workloads/deploy.js";
import { silentProgress, type Progress } from "../util/progress.js";
import { LineTail } from "../util/line-tail.js";
import { CONTROLLER_TAIL_LINES } from "./controller-tail.js";
import { cordonedNodes, leftCordoned } from "./cordon-check.js";
import { isOwnMilestone } from "./own-milestones.js";
import type { ExpectationInputs, ScenarioDefinition } from "./harness-types.js";
import { scenarioContext } from "./scenario-context.js";
import type { ScenarioContextParts } from "./scenario-context-parts.js";
import { scenarioBudgets } from "./scenario-budgets.js";
import { ScenarioTimeline } from "./scenario-timeline.js";
import { ScenarioSteps } from "./steps.js";
import { concludeScenario } from "./verdict.js";

/** Everything the scenario needs of the cluster: its `requires`, and a fence driver if it runs the controller. */
export function scenarioNeeds(definition: ScenarioDefinition): NodeCapability[] {
  const needs: NodeCapability[] = [...definition.requires];
  if (definition.usesController === true && !needs.includes("fencing")) needs.push("fencing");
  return needs;
}

export { isOwnMilestone };
// The scenario's types live in harness-types.ts (a leaf the harness's pieces import); the suites
// and the runner name them from here, with the functions that take them.
export type {
  BudgetContext,
  ControllerOverrides,
  DeriveContext,
  ExpectationInputs,
  ScenarioContext,
  ScenarioDefinition,
} from "./harness-types.js";

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
