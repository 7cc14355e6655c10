// Pieces the scenario families share: the node-loss workloads as a step, expectation helpers.
import { leaseRenewIntervalMs } from "../../cluster/profiles.js";
import type { ControllerConfig } from "../../controller/config.js";
import {
  expectedNodeLossWithController,
  OUT_OF_SERVICE_MILESTONE,
  type ControllerTimingSettings,
  type ExpectedMilestone,
} from "../../expect/model.js";
import type { Milestone } from "../../observe/milestones.js";
import type { Transition } from "../../observe/types.js";
import { deployNodeLossWorkloads, type DeployedWorkloads } from "../../workloads/deploy.js";
import type { ExpectationInputs, ScenarioContext } from "../harness.js";

export async function deployWebAndDb(context: ScenarioContext): Promise<DeployedWorkloads> {
  return context.steps.step("deploy a Deployment, a StatefulSet and one with an RWO volume", () =>
    deployNodeLossWorkloads(context.kc, {
      namespace: context.namespace,
      runId: context.cluster.runId,
      ...(context.cluster.storage ? { storageClass: context.cluster.storage.storageClass } : {}),
      ...(context.signal ? { signal: context.signal } : {}),
    }),
  );
}

/**
 * Takes the node down at the fault instant, abruptly (`stop`: a power cut) or in order
 * (`shutdown`: the kubelet sees it coming), and registers the undo right after: power it on and
 * wait until it is back.
 */
export async function takeNodeDown(
  context: ScenarioContext,
  node: string,
  how: "stop" | "shutdown",
): Promise<void> {
  const { cluster, steps } = context;
  await steps.step(how === "stop" ? `stop node ${node}` : `shut ${node} down gracefully`, async () => {
    context.faultStarts([node]);
    await (how === "stop" ? cluster.stopNode(node) : cluster.shutdownNode(node));
  });
  steps.registerUndo(`start node ${node} and wait until it is back`, async () => {
    await cluster.startNode(node);
    await context.waitNodeBack(node);
  });
}

/** The node-loss timeline model's view of the cluster: profile, latencies, whether volumes attach. */
export function nodeLossModelInputs(inputs: ExpectationInputs) {
  return {
    profile: inputs.profile,
    ...inputs.latencies,
    volumeAttachRequired: inputs.volumeAttachRequired,
  };
}

/** The node-loss timeline with the recovery controller at its scenario settings. */
export function expectedControllerRecovery(inputs: ExpectationInputs): ExpectedMilestone[] {
  return expectedNodeLossWithController({
    ...nodeLossModelInputs(inputs),
    controller: controllerTiming(inputs.controller),
  });
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

/** The kubelet renews its Lease every quarter of the Lease duration. */
export function leaseRenewMs(inputs: ExpectationInputs): number {
  return leaseRenewIntervalMs(inputs.profile);
}

/** The controller's detection window: Lease age past unhealthyAfter, seen at its next check. */
export function detectionWindow(inputs: ExpectationInputs): { minMs: number; maxMs: number } {
  const c = inputs.controller;
  return {
    minMs: Math.max(0, c.unhealthyAfterMs - leaseRenewMs(inputs) - inputs.slackMs),
    maxMs: c.unhealthyAfterMs + 2 * c.checkIntervalMs + inputs.slackMs,
  };
}

export function never(name: string, why: string, after = "fault-injected"): ExpectedMilestone {
  return { name, after, minMs: 0, maxMs: null, why };
}

/** The "nothing was fenced" expectations of scenarios where the controller must hold back. */
export function noFence(why: string): ExpectedMilestone[] {
  return [
    never("any-node:event:FenceStarted", `no fence anywhere: ${why}`),
    never(OUT_OF_SERVICE_MILESTONE, `never tainted out-of-service: ${why}`),
  ];
}

/**
 * "<id>:duplicate-ready" the first time two pods of the app are Ready at once on different nodes:
 * the split brain fencing exists to prevent (the old pod counts until it is gone or ended).
 */
export function duplicateReady(
  transitions: readonly Transition[],
  faultAtMs: number,
  namespace: string,
  app: string,
  id: string,
): Milestone[] {
  const ready = new Map<string, string>();
  for (const t of transitions) {
    if (t.subject.kind !== "Pod" || t.subject.namespace !== namespace || t.detail?.["app"] !== app) continue;
    const uid = t.subject.uid ?? t.subject.name;
    if (t.name === "pod-ready") ready.set(uid, t.node ?? "");
    if (t.name === "pod-gone" || t.name === "pod-terminal") ready.delete(uid);
    if (new Set(ready.values()).size > 1 && t.atMs >= faultAtMs) {
      return [
        { name: `${id}:duplicate-ready`, atMs: t.atMs - faultAtMs, ...(t.node ? { node: t.node } : {}) },
      ];
    }
  }
  return [];
}
