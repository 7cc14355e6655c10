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
import { leaseRenewIntervalMs, type TimingProfile } from "../cluster/profiles.js";
import { DEFAULT_CONTROLLER_CONFIG, type ControllerConfig } from "../controller/config.js";
import { RecoveryController, type RecoveryControllerOptions } from "../controller/controller.js";
import { installNodeFenceCrd } from "../controller/crd.js";
import type { WindowCheck } from "../expect/assert.js";
import { nominalWindows, widened, type ExpectedMilestone } from "../expect/windows.js";
import { k8s } from "../kube/client.js";
import { waitForNodeBack } from "../kube/queries.js";
import { deriveNodeLossMilestones, type Milestone, type WorkloadRef } from "../observe/milestones.js";
import { ForcedDetachLog } from "../observe/forced-detach.js";
import { isRecordedMilestoneName } from "../observe/milestone-names.js";
import { TimelineRecorder } from "../observe/recorder.js";
import type { Transition } from "../observe/types.js";
import { volumeWarningLine } from "../observe/volume-warnings.js";
import type { ScenarioRun } from "../report/summary.js";
import { ensureNamespace } from "../workloads/deploy.js";
import { silentProgress, type Progress } from "../util/progress.js";
import { LineTail } from "../util/line-tail.js";
import { pollUntil, sleep } from "../util/time.js";
import { CONTROLLER_TAIL_LINES, withControllerTail } from "./controller-tail.js";
import { deleteFinishedFences } from "./fences.js";
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
  /** Extra milestones from the recorded transitions (evictions, per-node events…). */
  derive?(transitions: readonly Transition[], context: DeriveContext): Milestone[];
  /**
   * The names of milestones the scenario makes itself, with `mark` or `derive` (a RegExp for a
   * family of names). Anything else it marks or derives is refused, so this list and the
   * recorder's vocabulary (isRecordedMilestoneName) are every name its windows may use.
   */
  ownMilestones?: readonly (string | RegExp)[];
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

/** Whether the scenario declared `name` among the milestones it makes itself. */
export function isOwnMilestone(definition: ScenarioDefinition, name: string): boolean {
  return (definition.ownMilestones ?? []).some((own) =>
    typeof own === "string" ? own === name : own.test(name),
  );
}

/** Whether `name` can appear on this scenario's timeline at all. */
export function isProducibleMilestone(
  definition: ScenarioDefinition,
  name: string,
  namespace = "ns",
): boolean {
  const workloadIds = definition.workloads(namespace).map((w) => w.id);
  return isRecordedMilestoneName(name, workloadIds) || isOwnMilestone(definition, name);
}

function undeclaredMilestone(definition: ScenarioDefinition, name: string): RekindleError {
  return new RekindleError(
    "SCENARIO_DEFINITION",
    `${definition.id} makes milestone "${name}" it does not declare`,
    {
      hint: "add it to the scenario's ownMilestones",
    },
  );
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
  /** Marks the fault instant (milestone "fault-injected") on these nodes; call right before injecting. */
  faultStarts(nodes: string[]): void;
  /** Adds a milestone at this instant, e.g. "pressure-relieved". */
  mark(name: string): void;
  /** ms since the fault (0 before it). */
  sinceFaultMs(): number;
  /** Waits for a milestone; the timeout defaults to its expected window's upper bound plus a minute. */
  awaitMilestone(name: string, timeoutMs?: number): Promise<Milestone>;
  milestones(): Milestone[];
  /** Starts the bundled controller in-process (stopped and its fences released by the undo). */
  startController(
    options?: Partial<Omit<RecoveryControllerOptions, "kc" | "config">> & {
      config?: Partial<ControllerConfig>;
    },
  ): Promise<RecoveryController>;
  /** Waits until the node is Ready with a fresh Lease (Ready alone may still read True right after an outage). */
  waitNodeBack(node: string, timeoutMs?: number): Promise<void>;
}

export interface ScenarioRunOptions {
  cluster: ClusterUnderTest;
  /** Namespace for this run (must not exist). */
  namespace: string;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface ScenarioResult extends ScenarioRun {
  expected: ExpectedMilestone[];
  checks: WindowCheck[];
  chart: string;
}

/** The in-process controller's settings: the profile's detection and check interval. */
export function scenarioControllerConfig(profile: TimingProfile): ControllerConfig {
  return { ...DEFAULT_CONTROLLER_CONFIG, ...profile.controller, identity: "rekindle-scenario" };
}

/** What the expected timeline needs to know of a cluster (`rekindle list` states it for the sim). */
export interface ExpectationFacts {
  profile: TimingProfile;
  eviction: EvictionSettings;
  latencies: ProviderLatencies;
  volumeAttachRequired: boolean;
  controllerManagerLogged: boolean;
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
  });
}

/** Milestones every scenario gets: node-loss ones for the primary node, conditions, kubelet terminations. */
function baseMilestones(
  definition: ScenarioDefinition,
  transitions: readonly Transition[],
  context: DeriveContext,
): Milestone[] {
  const { faultAtMs, namespace } = context;
  const lostNode = context.faultNodes[0] ?? "";
  const milestones = deriveNodeLossMilestones(transitions, {
    faultAtMs,
    lostNode,
    workloads: definition.workloads(namespace),
  });
  const seen = new Set(milestones.map((m) => m.name));
  const add = (name: string, t: Transition) => {
    if (seen.has(name)) return;
    seen.add(name);
    milestones.push({ name, atMs: t.atMs - faultAtMs, ...(t.node ? { node: t.node } : {}) });
  };
  for (const t of transitions) {
    if (t.atMs < faultAtMs) continue;
    // Pressure conditions turning True or False; a lost node's conditions going Unknown (and back) are noise here.
    const unknown = t.detail?.["status"] === "Unknown" || t.detail?.["from"] === "Unknown";
    if (t.name === "node-condition" && t.node === lostNode && t.detail?.["type"] !== "Ready" && !unknown) {
      add(`node-condition:${t.detail?.["type"] ?? ""}:${t.detail?.["status"] ?? ""}`, t);
    }
    // Pods the kubelet ended itself, by reason and app: "evicted:<app>", "terminated:<app>".
    if (t.name === "pod-terminal" && t.subject.namespace === namespace && t.detail?.["reason"]) {
      add(`${(t.detail["reason"] ?? "").toLowerCase()}:${t.detail["app"] ?? ""}`, t);
    }
    // Any fence anywhere (the "must not fence" scenarios assert this never happens).
    if (t.name === "event" && t.detail?.["reason"] === "FenceStarted") add("any-node:event:FenceStarted", t);
  }
  return milestones;
}

export async function runScenario<R extends NodeCapability>(
  definition: ScenarioDefinition<R>,
  options: ScenarioRunOptions,
): Promise<ScenarioResult> {
  const { namespace, signal } = options;
  const capable = missingCapabilities(options.cluster, definition.requires);
  if (!capable.ok) {
    throw new RekindleError(
      "UNSUPPORTED",
      `${definition.id} needs ${capable.missing.map((m) => m.capability).join(", ")}, which the ${options.cluster.provider} provider lacks`,
      { hint: capable.missing.map((m) => `${m.capability}: ${m.reason}`).join("; ") },
    );
  }
  const { cluster } = capable;
  const progress = options.progress ?? silentProgress;
  const kc = cluster.kubeConfig();
  const inputs = clusterExpectationInputs(cluster);
  const expected = definition.expected(inputs);
  const nominal = nominalWindows(expected);
  const steps = new ScenarioSteps(definition.id, progress);
  let recorder: TimelineRecorder | undefined;
  let faultAtMs = 0;
  let faultNodes: string[] = [];
  const marks: Milestone[] = [];
  const deriveContext = (): DeriveContext => ({ faultAtMs, faultNodes, namespace, inputs });
  // Read from the scenario's start on, where the provider has the log on this machine.
  const controllerManagerLog = new ForcedDetachLog(
    options.cluster.capabilities["controller-manager-flags"]?.controllerManagerLogPath(),
  );
  const milestonesOf = (transitions: readonly Transition[], untilMs = Infinity): Milestone[] =>
    faultAtMs === 0
      ? []
      : [
          ...baseMilestones(definition, transitions, deriveContext()),
          ...controllerManagerLog.milestones(faultAtMs, faultNodes[0] ?? "", untilMs),
          ...marks,
          ...derived(transitions),
        ].sort((a, b) => a.atMs - b.atMs);
  const milestones = () => milestonesOf(recorder?.transitions ?? []);
  // The in-process controllers' last lines: a milestone that never comes is often their decision.
  const controllerTail = new LineTail(CONTROLLER_TAIL_LINES);
  function derived(transitions: readonly Transition[]): Milestone[] {
    const out = definition.derive?.(transitions, deriveContext()) ?? [];
    const stray = out.find((m) => !isOwnMilestone(definition, m.name));
    if (stray) throw undeclaredMilestone(definition, stray.name);
    return out;
  }

  const context: ScenarioContext<R> = {
    cluster,
    kc,
    steps,
    namespace,
    inputs,
    signal,
    progress,
    faultStarts(nodes) {
      faultAtMs = Date.now();
      faultNodes = nodes;
    },
    mark(name) {
      if (!isOwnMilestone(definition, name)) throw undeclaredMilestone(definition, name);
      marks.push({ name, atMs: Date.now() - faultAtMs });
    },
    sinceFaultMs() {
      return faultAtMs === 0 ? 0 : Date.now() - faultAtMs;
    },
    awaitMilestone(name, timeoutMs) {
      const budget = timeoutMs ?? (nominal.find((w) => w.name === name)?.maxMs ?? 540_000) + 60_000;
      return steps.step(`await ${name}`, () =>
        pollUntil(async () => Promise.resolve(milestones().find((m) => m.name === name)), {
          what: `milestone ${name}`,
          reportEveryMs: 30_000,
          onWait: (elapsedMs) => {
            progress.info(
              `${definition.id}: still awaiting ${name} (${Math.round(elapsedMs / 1000)}s of at most ${Math.round(budget / 1000)}s)`,
            );
          },
          timeoutMs: budget,
          intervalMs: 100,
          ...(signal ? { signal } : {}),
        }).catch((error: unknown) => {
          throw withControllerTail(error, controllerTail.lines());
        }),
      );
    },
    milestones,
    async startController(overrides = {}) {
      if (definition.usesController !== true) {
        throw new RekindleError(
          "SCENARIO_DEFINITION",
          `${definition.id} starts the controller without declaring usesController`,
          {
            hint: "set usesController: true in its ScenarioDefinition",
          },
        );
      }
      const fencing = options.cluster.capabilities.fencing;
      if (!overrides.drivers && !fencing) {
        throw new RekindleError(
          "UNSUPPORTED",
          `${definition.id} starts the controller on a cluster with no fence driver`,
          {
            hint: `${options.cluster.unsupported.fencing ?? "the provider offers none"}; pass drivers to fence with another`,
          },
        );
      }
      const driver = overrides.drivers ? undefined : fencing?.fenceDriver();
      const config = { ...inputs.controller, ...overrides.config };
      const controller = new RecoveryController({
        kc,
        fenceConfig: overrides.fenceConfig ?? {
          templates: { node: { driver: driver?.name ?? "" } },
          defaultTemplate: "node",
        },
        drivers: overrides.drivers ?? new Map(driver ? [[driver.name, driver]] : []),
        log: (message) => {
          const line = `[controller ${config.identity}] ${message}`;
          controllerTail.push(line);
          progress.info(line);
        },
        ...overrides,
        config,
      });
      await steps.step(
        `start the recovery controller (unhealthyAfter ${config.unhealthyAfterMs / 1000}s${driver ? `, driver ${driver.name}` : ""})`,
        () => {
          controller.start();
          return Promise.resolve();
        },
      );
      // As in production, where the controller runs long before a fault: it has seen every node
      // renew (or judged it lost), so it detects a loss from the last renewal, not from its start.
      // A fixed wait of one renewal interval first, not "until the last node renewed": that would
      // put every fault right after a renewal, the slowest case, and bias the timings.
      await steps.step("let the controller see every node renew", async () => {
        await sleep(leaseRenewIntervalMs(cluster.profile) + 2 * config.checkIntervalMs, signal);
        await pollUntil(
          async () => Promise.resolve(controller.unobservedNodes()?.length === 0 ? true : undefined),
          {
            what: "the recovery controller to have seen every node renew",
            timeoutMs: config.unhealthyAfterMs + 30_000,
            intervalMs: 100,
            ...(signal ? { signal } : {}),
          },
        );
      });
      steps.registerUndo(`stop the recovery controller (${config.identity})`, () => controller.stop());
      // Runs before the stop (undo is last-in first-out), after the nodes are back: a fence left
      // half-undone would be resumed by the next scenario's controller.
      // Deleting them (once finished) leaves the next scenario no fence history: no per-node rate
      // limit carried over, no earlier fence taken for its own. Idempotent: with several
      // controllers, the one registered last runs it while every controller still runs.
      steps.registerUndo("wait for the controller to finish every NodeFence, then delete them", () =>
        deleteFinishedFences(kc),
      );
      return controller;
    },
    async waitNodeBack(node, timeoutMs = 180_000) {
      await waitForNodeBack(kc, node, {
        freshWithinMs: leaseRenewIntervalMs(cluster.profile) + 1_000,
        timeoutMs,
        ...(signal ? { signal } : {}),
      });
    },
  };

  let failure: unknown;
  let observedUntilMs = 0;
  try {
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
    recorder = await steps.step("start the timeline recorder", () =>
      TimelineRecorder.start(kc, {
        namespaces: [namespace],
        onTransition: (transition) => {
          const warning = volumeWarningLine(transition);
          if (warning !== undefined) progress.info(`${definition.id}: [event] ${warning}`);
        },
      }),
    );
    await definition.run(context);
    observedUntilMs = Date.now();
  } catch (error) {
    failure = error;
    observedUntilMs = Date.now();
  } finally {
    try {
      await steps.undoAll();
    } catch (error) {
      failure ??= error;
    }
    await recorder?.stop();
  }

  // Judged on what happened up to the end of the scenario's own steps; the undo is not judged,
  // but the node coming back during it is reported.
  const observed = milestonesOf(
    (recorder?.transitions ?? []).filter((t) => t.atMs <= observedUntilMs),
    observedUntilMs,
  );
  const readyAgain = milestonesOf(recorder?.transitions ?? []).find((m) => m.name === "node-ready-again");
  if (readyAgain && !observed.some((m) => m.name === "node-ready-again")) observed.push(readyAgain);
  const verdict = await concludeScenario({
    title: definition.id,
    subtitle: `profile ${cluster.profile.name}, ${cluster.provider}, fault on ${faultNodes.join(", ") || "?"}`,
    expected,
    milestones: observed,
    failure,
    recoveryOf: definition.recoveryOf ?? definition.workloads(namespace).map((w) => w.id),
  });
  return { ...verdict, expected };
}
