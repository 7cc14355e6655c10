// The node-loss scenario: a Deployment, a StatefulSet and a StatefulSet with an RWO volume share a
// node; the node stops; the recorder times the recovery chain; the result is checked against the
// expected model. Modes: "baseline" (nothing helps: the StatefulSets stay down),
// "manual-out-of-service" (an operator taints the lost node out-of-service) and "controller" (the
// bundled recovery controller fences the node, taints it and cleans up).
import type { TimingProfile } from "../cluster/profiles.js";
import type { StorageSettings } from "../cluster/provider.js";
import type { WindowCheck } from "../expect/assert.js";
import {
  expectedNodeLoss,
  expectedNodeLossWithController,
  nominalWindows,
  POD_GC_PERIOD_MS,
  type ControllerTimingSettings,
  type ExpectedMilestone,
  type RecoveryMode,
} from "../expect/model.js";
import { DEFAULT_CONTROLLER_CONFIG, type ControllerConfig } from "../controller/config.js";
import { RecoveryController } from "../controller/controller.js";
import type { FenceDriver } from "../controller/drivers/types.js";
import { k8s, nodeConditionStatus } from "../kube/client.js";
import { OUT_OF_SERVICE_TAINT, readNode } from "../kube/queries.js";
import { addTaint, removeTaint } from "../kube/taints.js";
import { deriveNodeLossMilestones, type Milestone, type WorkloadRef } from "../observe/milestones.js";
import { TimelineRecorder } from "../observe/recorder.js";
import { installNodeFenceCrd } from "../controller/crd.js";
import type { Transition } from "../observe/types.js";
import type { ScenarioRun, SummaryExpected } from "../report/summary.js";
import { silentProgress, type Progress } from "../util/progress.js";
import { pollUntil, sleep } from "../util/time.js";
import {
  deployNodeLossWorkloads,
  DEPLOYMENT_NAME,
  PLAIN_STATEFULSET_NAME,
  STATEFULSET_NAME,
} from "../workloads/deploy.js";
import { waitFencesFinished } from "./fences.js";
import { ScenarioSteps } from "./steps.js";
import { concludeScenario } from "./verdict.js";

/** What a provider must offer for node-loss scenarios. */
export interface NodeLossTarget {
  readonly runId: string;
  readonly profile: TimingProfile;
  /** Default: the sim's attachable CSI storage. */
  readonly storage?: StorageSettings;
  kubeConfig(): k8s.KubeConfig;
  stopNode(name: string): void | Promise<void>;
  startNode(name: string): Promise<void>;
}

/** The bundled recovery controller, run in-process for the "controller" mode. */
export interface ScenarioController {
  driver: FenceDriver;
  /** Default: 20 s on the default profile, 6 s on faster ones (3 missed Lease renewals). */
  unhealthyAfterMs?: number;
}

export type NodeLossMode = RecoveryMode | "controller";

export const NODE_LOSS_TITLES: Readonly<Record<NodeLossMode, string>> = {
  baseline: "baseline: Deployment recovers after the toleration, the StatefulSet with a volume never does",
  "manual-out-of-service": "out-of-service taint by hand: PodGC frees the StatefulSet pod, its volume moves",
  controller:
    "recovery controller: fence, out-of-service taint, force delete; everything back well within a minute",
};

export interface NodeLossScenarioOptions {
  target: NodeLossTarget;
  mode: NodeLossMode;
  /** Required for mode "controller". */
  controller?: ScenarioController;
  /** Namespace for this run's workloads (must not exist). */
  namespace: string;
  /** How long the baseline watches the StatefulSet stay stuck. Default: 3 PodGC periods (60 s). */
  observeStuckMs?: number;
  /** Container start and attach latency the model assumes. Defaults: the sim's 1000 / 500 ms. */
  podStartMs?: number;
  attachMs?: number;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface NodeLossScenarioResult extends ScenarioRun {
  lostNode: string;
  expected: ExpectedMilestone[];
  checks: WindowCheck[];
  transitions: Transition[];
  /** The timeline chart (SVG text). */
  chart: string;
}

/** Controller settings for a scenario: upstream-like detection on the default profile, compressed on faster ones. */
export function scenarioControllerConfig(
  profile: TimingProfile,
  controller: ScenarioController | undefined,
): ControllerConfig {
  const unhealthyAfterMs = controller?.unhealthyAfterMs ?? (profile.name === "default" ? 20_000 : 6_000);
  return {
    ...DEFAULT_CONTROLLER_CONFIG,
    unhealthyAfterMs,
    checkIntervalMs: 500,
    identity: "rekindle-scenario",
  };
}

/** The controller's part of the expected timeline, from its settings. */
export function controllerTiming(config: ControllerConfig): ControllerTimingSettings {
  return {
    unhealthyAfterMs: config.unhealthyAfterMs,
    checkIntervalMs: config.checkIntervalMs,
    // A fence driver that powers off at once is confirmed at the next check.
    fenceMs: config.checkIntervalMs * 2,
    cleanupMs: config.detachGraceMs + config.checkIntervalMs * 2,
  };
}

export function nodeLossWorkloads(namespace: string): WorkloadRef[] {
  return [
    { id: "deployment", app: DEPLOYMENT_NAME, namespace },
    { id: "statefulset", app: STATEFULSET_NAME, namespace },
    { id: "statefulset-plain", app: PLAIN_STATEFULSET_NAME, namespace },
  ];
}

/** Resolved expected windows for summary.json: against actual anchors where known, else nominal. */
export function summaryExpected(
  expected: readonly ExpectedMilestone[],
  checks: readonly WindowCheck[],
): SummaryExpected[] {
  const nominal = new Map(nominalWindows(expected).map((w) => [w.name, w]));
  return expected.map((e) => {
    const check = checks.find((c) => c.name === e.name);
    const minMs = check?.minMs ?? nominal.get(e.name)?.minMs ?? e.minMs;
    const maxMs = e.maxMs === null ? null : (check?.maxMs ?? nominal.get(e.name)?.maxMs ?? e.maxMs);
    return { name: e.name, minMs, maxMs };
  });
}

export async function runNodeLossScenario(options: NodeLossScenarioOptions): Promise<NodeLossScenarioResult> {
  const { target, mode, namespace } = options;
  const profile = target.profile;
  const progress = options.progress ?? silentProgress;
  const signal = options.signal;
  const kc = target.kubeConfig();
  const steps = new ScenarioSteps(`node-loss/${mode}`, progress);
  const latencies = {
    volumeAttachRequired: target.storage?.attachRequired ?? true,
    ...(options.podStartMs !== undefined ? { podStartMs: options.podStartMs } : {}),
    ...(options.attachMs !== undefined ? { attachMs: options.attachMs } : {}),
  };
  const controllerConfig =
    mode === "controller" ? scenarioControllerConfig(profile, options.controller) : undefined;
  const expected =
    controllerConfig === undefined
      ? expectedNodeLoss({ profile, mode: mode as RecoveryMode, ...latencies })
      : expectedNodeLossWithController({
          profile,
          ...latencies,
          controller: controllerTiming(controllerConfig),
        });
  const nominal = nominalWindows(expected);
  const waitBudget = (name: string) => (nominal.find((w) => w.name === name)?.maxMs ?? 600_000) + 60_000;
  const workloads = nodeLossWorkloads(namespace);
  let recorder: TimelineRecorder | undefined;
  let faultAtMs = 0;
  let observedUntilMs = 0;
  let lostNode = "";
  let failure: unknown;
  const milestonesNow = (): Milestone[] =>
    deriveNodeLossMilestones(recorder?.transitions ?? [], { faultAtMs, lostNode, workloads });
  const awaitMilestone = async (name: string) =>
    steps.step(`await ${name}`, () =>
      pollUntil(async () => Promise.resolve(milestonesNow().find((m) => m.name === name)), {
        what: `milestone ${name}`,
        timeoutMs: waitBudget(name),
        intervalMs: 100,
        ...(signal ? { signal } : {}),
        reportEveryMs: 30_000,
        onWait: (elapsedMs) => {
          progress.info(
            `node-loss/${mode}: still awaiting ${name} (${Math.round(elapsedMs / 1000)}s of at most ${Math.round(waitBudget(name) / 1000)}s)`,
          );
        },
      }),
    );

  try {
    const deployed = await steps.step("deploy a Deployment, a StatefulSet and one with an RWO volume", () =>
      deployNodeLossWorkloads(kc, {
        namespace,
        runId: target.runId,
        ...(target.storage ? { storageClass: target.storage.storageClass } : {}),
        ...(signal ? { signal } : {}),
      }),
    );
    lostNode = deployed.statefulSetNode;
    if (controllerConfig && options.controller) {
      const driver = options.controller.driver;
      await steps.step("install the NodeFence CRD", () => installNodeFenceCrd(kc));
      const controller = new RecoveryController({
        kc,
        config: controllerConfig,
        fenceConfig: { templates: { node: { driver: driver.name } }, defaultTemplate: "node" },
        drivers: new Map([[driver.name, driver]]),
      });
      await steps.step(
        `start the recovery controller (unhealthyAfter ${controllerConfig.unhealthyAfterMs / 1000}s, driver ${driver.name})`,
        () => {
          controller.start();
          return Promise.resolve();
        },
      );
      steps.registerUndo("stop the recovery controller", () => controller.stop());
      steps.registerUndo("wait for the controller to finish every NodeFence", () => waitFencesFinished(kc));
    }
    recorder = await steps.step("start the timeline recorder", () =>
      TimelineRecorder.start(kc, { namespaces: [namespace] }),
    );
    await steps.step(`stop node ${lostNode}`, async () => {
      faultAtMs = Date.now();
      await target.stopNode(lostNode);
    });
    steps.registerUndo(`start node ${lostNode} and wait for Ready`, async () => {
      await target.startNode(lostNode);
      await pollUntil(
        async () =>
          nodeConditionStatus(await readNode(kc, lostNode), "Ready") === "True" ? true : undefined,
        {
          what: `${lostNode} Ready again`,
          timeoutMs: 120_000,
        },
      );
    });
    if (mode === "controller") {
      await awaitMilestone("statefulset:recovered");
      await awaitMilestone("statefulset-plain:recovered");
      await awaitMilestone("deployment:recovered");
    } else {
      await awaitMilestone("node-ready-unknown");
      await awaitMilestone("deployment:recovered");
      await awaitMilestone("statefulset:pod-deletion-requested");
      await awaitMilestone("statefulset-plain:pod-deletion-requested");
    }
    if (mode === "controller") {
      // Recovery is the controller's; nothing to do by hand.
    } else if (mode === "baseline") {
      const observeMs = options.observeStuckMs ?? 3 * POD_GC_PERIOD_MS;
      await steps.step(`observe the StatefulSet stuck for ${observeMs / 1000}s`, () =>
        sleep(observeMs, signal),
      );
    } else {
      await steps.step(
        `taint ${lostNode} ${OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute by hand`,
        async () => {
          await addTaint(kc, lostNode, {
            key: OUT_OF_SERVICE_TAINT,
            value: "nodeshutdown",
            effect: "NoExecute",
          });
        },
      );
      steps.registerUndo(`remove the out-of-service taint from ${lostNode}`, async () => {
        await removeTaint(kc, lostNode, OUT_OF_SERVICE_TAINT);
      });
      await awaitMilestone("statefulset:recovered");
      await awaitMilestone("statefulset-plain:recovered");
    }
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
    await kc
      .makeApiClient(k8s.CoreV1Api)
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  }

  // Judge what happened while the fault was in force; the restoration afterwards is reported too.
  const observed = (recorder?.transitions ?? []).filter((t) => t.atMs <= observedUntilMs);
  const milestones =
    faultAtMs === 0 ? [] : deriveNodeLossMilestones(observed, { faultAtMs, lostNode, workloads });
  const afterRestore =
    faultAtMs === 0
      ? []
      : deriveNodeLossMilestones(recorder?.transitions ?? [], { faultAtMs, lostNode, workloads });
  const readyAgain = afterRestore.find((m) => m.name === "node-ready-again");
  if (readyAgain && !milestones.some((m) => m.name === "node-ready-again")) milestones.push(readyAgain);
  const verdict = await concludeScenario({
    title: `node-loss/${mode}`,
    subtitle: `profile ${profile.name}, lost node ${lostNode || "?"}`,
    expected,
    milestones,
    failure,
    recoveryOf: workloads.map((w) => w.id),
  });
  return {
    ...verdict,
    lostNode,
    expected,
    transitions: [...(recorder?.transitions ?? [])],
  };
}
