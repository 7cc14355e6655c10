// Pieces the scenario families (suites/) share: the node-loss workloads and node faults as steps,
// expectation helpers.
import { leaseRenewIntervalMs } from "../cluster/profiles.js";
import type { ControllerConfig } from "../controller/config.js";
import {
  earlyDetectionBounds,
  expectedNodeLossWithController,
  OUT_OF_SERVICE_MILESTONE,
  type ControllerTimingSettings,
  type ExpectedMilestone,
} from "../expect/model.js";
import { never } from "../expect/windows.js";
import type { ApplyOptions, FaultHandle } from "../fault/handle.js";
import type { FaultSpec } from "../fault/injector.js";
import { duplicateReadyMilestone } from "../observe/duplicate-ready.js";
import type { Milestone, WorkloadRef } from "../observe/milestones.js";
import type { Transition } from "../observe/types.js";
import {
  DEPLOYMENT_NAME,
  deployNodeLossWorkloads,
  PLAIN_STATEFULSET_NAME,
  STATEFULSET_NAME,
  type DeployedWorkloads,
} from "../workloads/deploy.js";
import type { ExpectationInputs, ScenarioContext } from "./harness.js";

export async function deployWebAndDb(context: ScenarioContext): Promise<DeployedWorkloads> {
  return context.steps.step("deploy a Deployment, a StatefulSet and one with an RWO volume", () =>
    deployNodeLossWorkloads(context.kc, {
      namespace: context.namespace,
      runId: context.cluster.runId,
      // Real kubelets only: see deploy/workloads/presence.yaml.
      presenceOnEveryNode: context.cluster.provider === "kind",
      ...(context.cluster.storage ? { storageClass: context.cluster.storage.storageClass } : {}),
      // On an existing cluster faults may hit only these nodes: the StatefulSet starts on one.
      ...(context.cluster.faultRails ? { preferNodes: context.cluster.faultRails.allowedNodes } : {}),
      ...(context.signal ? { signal: context.signal } : {}),
    }),
  );
}

/**
 * The step `what`: injects the fault (context.faults) at the fault instant, marked on the nodes it
 * hits right before its first side effect. Returns its handle.
 */
export function injectFault(
  context: ScenarioContext,
  what: string,
  fault: Omit<FaultSpec, "onFirstEffect"> & ApplyOptions & { nodes: readonly string[] },
): Promise<FaultHandle> {
  return context.steps.step(what, () =>
    context.faults.inject({
      ...fault,
      onFirstEffect: () => {
        context.faultStarts([...fault.nodes]);
      },
    }),
  );
}

/**
 * Stops the node at the fault instant, abruptly (a power cut), through a fault handle registered
 * before it acts; after it, an undo that waits until the node is back (run after the handle's revert
 * powered it on).
 */
export async function stopNodeAbruptly(context: ScenarioContext<"lifecycle">, node: string): Promise<void> {
  registerWaitBack(context, node);
  await injectFault(context, `stop node ${node}`, { action: { kind: "stop" }, nodes: [node] });
}

/**
 * Shuts the node down in order at the fault instant (the kubelet sees it coming and ends its
 * pods), through a fault handle whose revert powers it on; waits until it is back after that.
 */
export async function shutNodeDown(
  context: ScenarioContext<"lifecycle" | "graceful-shutdown">,
  node: string,
): Promise<void> {
  registerWaitBack(context, node);
  await injectFault(context, `shut ${node} down gracefully`, {
    action: { kind: "graceful-shutdown" },
    nodes: [node],
  });
}

/**
 * Registered before a fault's handle, so it runs after the handle's revert: waits until the node
 * is Ready with a fresh Lease again.
 */
export function registerWaitBack(context: ScenarioContext, node: string): void {
  context.steps.registerUndo(`wait until node ${node} is back`, () => context.waitNodeBack(node));
}

/** The node-loss workloads whose milestones every node-loss-shaped scenario derives. */
export function nodeLossWorkloads(namespace: string): WorkloadRef[] {
  return [
    { id: "deployment", app: DEPLOYMENT_NAME, namespace },
    { id: "statefulset", app: STATEFULSET_NAME, namespace },
    { id: "statefulset-plain", app: PLAIN_STATEFULSET_NAME, namespace },
  ];
}

/** The node-loss timeline model's view of the cluster: profile, latencies, whether volumes attach. */
export function nodeLossModelInputs(inputs: ExpectationInputs) {
  return {
    profile: inputs.profile,
    ...inputs.latencies,
    volumeAttachRequired: inputs.volumeAttachRequired,
    slackMs: inputs.slackMs,
  };
}

/**
 * The node-loss timeline with the recovery controller at its scenario settings; `frozen`: the lost
 * node is partitioned (frozen), which some providers' fence drivers take longer to power off;
 * `earlyReadFails`: the controller's early power read gets no answer, so it waits unhealthyAfter.
 */
export function expectedControllerRecovery(
  inputs: ExpectationInputs,
  options: { frozen?: boolean; earlyReadFails?: boolean } = {},
): ExpectedMilestone[] {
  const frozen = options.frozen === true;
  const powerOffMs = frozen ? (inputs.latencies.frozenPowerOffMs ?? 0) : 0;
  // A frozen node reads on, and a read that fails finds nothing: no early power read finds it off.
  const controller = {
    ...controllerTiming(inputs.controller, powerOffMs, inputs.powerLossNotices),
    ...(frozen || options.earlyReadFails === true ? { earlyPowerRead: false } : {}),
  };
  return expectedNodeLossWithController({ ...nodeLossModelInputs(inputs), controller });
}

/**
 * The controller's part of the expected timeline, from its settings, the driver's power-off time and
 * whether the driver hears of power losses (ExpectationInputs.powerLossNotices).
 */
export function controllerTiming(
  config: ControllerConfig,
  powerOffMs = 0,
  powerLossNotices = false,
): ControllerTimingSettings {
  return {
    unhealthyAfterMs: config.unhealthyAfterMs,
    checkIntervalMs: config.checkIntervalMs,
    // A fence driver that powers off at once is confirmed at the next check.
    fenceMs: config.checkIntervalMs * 2 + powerOffMs,
    cleanupMs: config.detachGraceMs + config.checkIntervalMs * 2,
    earlyPowerRead: config.earlyPowerRead,
    powerLossNotices,
  };
}

/** The kubelet renews its Lease every quarter of the Lease duration. */
export function leaseRenewMs(inputs: ExpectationInputs): number {
  return leaseRenewIntervalMs(inputs.profile);
}

/**
 * The controller's detection window: no renewal seen for unhealthyAfter, noticed at a check. Its
 * clock starts when it sees the last renewal, up to one check interval after the renewal itself.
 * `poweredOff`: the fault powers the node off (a stop), so a controller that reads power early
 * judges it lost at its first missed renewal (model.ts earlyDetectionBounds).
 */
export function detectionWindow(
  inputs: ExpectationInputs,
  options: { poweredOff?: boolean } = {},
): { minMs: number; maxMs: number } {
  const c = inputs.controller;
  const early =
    options.poweredOff === true
      ? earlyDetectionBounds(leaseRenewMs(inputs), { ...c, powerLossNotices: inputs.powerLossNotices })
      : undefined;
  if (early !== undefined) {
    return {
      minMs: Math.max(0, early.minMs - inputs.slackMs),
      maxMs: early.maxMs + c.checkIntervalMs + inputs.slackMs,
    };
  }
  return {
    minMs: Math.max(0, c.unhealthyAfterMs - leaseRenewMs(inputs) - inputs.slackMs),
    maxMs: c.unhealthyAfterMs + 3 * c.checkIntervalMs + inputs.slackMs,
  };
}

/** The "nothing was fenced" expectations of scenarios where the controller must hold back. */
export function noFence(why: string): ExpectedMilestone[] {
  return [
    never("any-node:event:FenceStarted", `no fence anywhere: ${why}`),
    never(OUT_OF_SERVICE_MILESTONE, `never tainted out-of-service: ${why}`),
  ];
}

/**
 * "<id>:duplicate-ready" the first time two pods of the app are Ready at once on different nodes
 * (see duplicateReadyMilestone; every derived workload has it among its milestones now).
 */
export function duplicateReady(
  transitions: readonly Transition[],
  faultAtMs: number,
  namespace: string,
  app: string,
  id: string,
): Milestone[] {
  const found = duplicateReadyMilestone(transitions, faultAtMs, { id, app, namespace });
  return found ? [found] : [];
}

export { never };
