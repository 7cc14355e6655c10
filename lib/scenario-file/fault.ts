// A scenario file's fault on its target nodes, as steps: each node's undo registered right after
// its fault, staggered when the file asks, lifted after its duration (partition, pressure), and
// the operator's reflex (force delete, drain, the out-of-service taint by hand) at its time.
import type { PressureKind } from "../cluster/provider.js";
import { RekindleError } from "../errors.js";
import {
  DRAIN_STARTED_MILESTONE,
  DRAIN_TIMED_OUT_MILESTONE,
  DRAIN_TIMEOUT_MS,
  RELEASED_BY_HAND_MILESTONE,
} from "../expect/by-hand.js";
import { PARTITION_HEALED_MILESTONE, PRESSURE_RELIEVED_MILESTONE } from "../expect/node-windows.js";
import { OUT_OF_SERVICE_TAINT } from "../kube/queries.js";
import { addTaint, removeTaint } from "../kube/taints.js";
import type { ScenarioContext } from "../scenario/harness.js";
import { DRAIN_FLAGS, drainNode, forceDeletePods } from "../scenario/operator-actions.js";
import { sleep } from "../util/time.js";
import type { FaultSpec, FaultType, OperatorAction } from "./types.js";

/** The marks this runner sets, as the workload model names them. */
export const FAULT_MARKS = [
  PARTITION_HEALED_MILESTONE,
  PRESSURE_RELIEVED_MILESTONE,
  RELEASED_BY_HAND_MILESTONE,
  DRAIN_STARTED_MILESTONE,
  DRAIN_TIMED_OUT_MILESTONE,
] as const;

/** Every capability a fault may use: the context is typed with all of them, and checked before run. */
export type FaultCapability = "lifecycle" | "partition" | "graceful-shutdown" | "pressure";

/** The capabilities each fault needs of the provider (a shut-down node is started again by lifecycle). */
export const FAULT_CAPABILITIES: Readonly<Record<FaultType, readonly FaultCapability[]>> = {
  stop: ["lifecycle"],
  partition: ["partition"],
  "graceful-shutdown": ["lifecycle", "graceful-shutdown"],
  "memory-pressure": ["pressure"],
  "disk-pressure": ["pressure"],
};

type FaultContext = ScenarioContext<FaultCapability>;

function pressureKind(type: FaultType): PressureKind | undefined {
  if (type === "memory-pressure") return "memory";
  if (type === "disk-pressure") return "disk";
  return undefined;
}

/** Hits one node and registers its undo right after. */
async function hitNode(context: FaultContext, type: FaultType, node: string): Promise<void> {
  const { cluster, steps } = context;
  const { lifecycle, partition, pressure } = cluster.capabilities;
  const back = async () => {
    await lifecycle.startNode(node);
    await context.waitNodeBack(node);
  };
  switch (type) {
    case "stop":
      await lifecycle.stopNode(node);
      steps.registerUndo(`start node ${node} and wait until it is back`, back);
      return;
    case "graceful-shutdown":
      await cluster.capabilities["graceful-shutdown"].shutdownNode(node);
      steps.registerUndo(`start node ${node} and wait until it is back`, back);
      return;
    case "partition":
      await partition.partitionNode(node);
      steps.registerUndo(`heal ${node} and wait until it is back`, async () => {
        await partition.healNode(node);
        await context.waitNodeBack(node);
      });
      return;
    case "memory-pressure":
    case "disk-pressure": {
      const kind = pressureKind(type) ?? "memory";
      await pressure.applyPressure(node, kind);
      steps.registerUndo(`relieve ${kind} pressure on ${node}`, () => pressure.relievePressure(node, kind));
      return;
    }
  }
}

/** Lifts a fault that has a duration; idempotent with the undo registered by hitNode. */
async function liftNode(context: FaultContext, type: FaultType, node: string): Promise<void> {
  const { partition, pressure } = context.cluster.capabilities;
  if (type === "partition") await partition.healNode(node);
  const kind = pressureKind(type);
  if (kind !== undefined) await pressure.relievePressure(node, kind);
}

/** Injects the fault on `nodes` (staggered), marking the fault instant at the first. */
export async function injectFault(
  context: FaultContext,
  fault: FaultSpec,
  nodes: readonly string[],
): Promise<void> {
  for (const [index, node] of nodes.entries()) {
    if (index > 0 && (fault.staggerMs ?? 0) > 0) {
      await context.steps.step(`wait ${fault.staggerMs ?? 0} ms (stagger)`, () =>
        sleep(fault.staggerMs ?? 0, context.signal),
      );
    }
    await context.steps.step(`${fault.type} ${node}`, async () => {
      if (index === 0) context.faultStarts([...nodes]);
      await hitNode(context, fault.type, node);
    });
  }
}

/** Waits out the fault's duration from the fault instant, then lifts it on every node. */
export async function liftFaultAfterDuration(
  context: FaultContext,
  fault: FaultSpec,
  nodes: readonly string[],
): Promise<void> {
  if (fault.durationMs === undefined) return;
  const left = fault.durationMs - context.sinceFaultMs();
  if (left > 0)
    await context.steps.step(`keep the fault for ${fault.durationMs} ms`, () => sleep(left, context.signal));
  await context.steps.step(`lift the ${fault.type} on ${nodes.join(", ")}`, async () => {
    for (const node of nodes) await liftNode(context, fault.type, node);
    context.mark(fault.type === "partition" ? PARTITION_HEALED_MILESTONE : PRESSURE_RELIEVED_MILESTONE);
  });
}

async function act(context: FaultContext, action: OperatorAction, node: string): Promise<void> {
  switch (action) {
    case "force-delete": {
      context.mark(RELEASED_BY_HAND_MILESTONE);
      const deleted = await forceDeletePods(context, node, "all-pods");
      context.progress.info(`force-deleted ${deleted.join(", ") || "nothing"}`);
      return;
    }
    case "drain":
      context.mark(DRAIN_STARTED_MILESTONE);
      // A drain of a node that is gone hangs on pods no kubelet ends; the operator then forces it.
      if (!(await drainNode(context, node, { noGrace: false, timeoutMs: DRAIN_TIMEOUT_MS }))) {
        context.mark(DRAIN_TIMED_OUT_MILESTONE);
        await drainNode(context, node, { noGrace: true, timeoutMs: DRAIN_TIMEOUT_MS });
      }
      return;
    case "out-of-service":
      await addTaint(context.kc, node, {
        key: OUT_OF_SERVICE_TAINT,
        value: "nodeshutdown",
        effect: "NoExecute",
      });
      context.steps.registerUndo(`remove the out-of-service taint from ${node}`, async () => {
        await removeTaint(context.kc, node, OUT_OF_SERVICE_TAINT);
      });
      return;
  }
}

/** The operator's reflex at its time after the fault, on every faulted node. */
export async function operatorActs(
  context: FaultContext,
  fault: FaultSpec,
  nodes: readonly string[],
): Promise<void> {
  const operator = fault.operator;
  if (operator === undefined) return;
  if (fault.type !== "stop")
    throw new RekindleError("INVALID_INPUT", `fault.operator goes with a stop fault, not ${fault.type}`);
  const left = operator.afterMs - context.sinceFaultMs();
  if (left > 0)
    await context.steps.step(`wait ${operator.afterMs} ms after the fault`, () =>
      sleep(left, context.signal),
    );
  const how = operator.action === "drain" ? `kubectl drain ${DRAIN_FLAGS.join(" ")}` : operator.action;
  await context.steps.step(`operator: ${how} on ${nodes.join(", ")}`, async () => {
    for (const node of nodes) await act(context, operator.action, node);
  });
}
