// A scenario file's fault on its target nodes, as steps: one fault handle registered before the
// first node is hit, staggered when the file asks, lifted after its duration (partition, pressure), and
// the operator's reflex (force delete, drain, the out-of-service taint by hand) at its time.
import type { FaultHandle } from "../fault/handle.js";
import type { FaultAction } from "../fault/types.js";
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
import { registerWaitBack } from "../scenario/common.js";
import type { ScenarioContext } from "../scenario/harness.js";
import { DRAIN_FLAGS, drainNode, forceDeletePods, uncordonAfterDrain } from "../scenario/operator-actions.js";
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

/** The fault layer's action for a scenario file's fault type. */
export function faultAction(type: FaultType): FaultAction {
  switch (type) {
    case "stop":
    case "graceful-shutdown":
    case "partition":
      return { kind: type };
    case "memory-pressure":
      return { kind: "pressure", pressure: "memory" };
    case "disk-pressure":
      return { kind: "pressure", pressure: "disk" };
  }
}

/**
 * Injects the fault on `nodes` (staggered), marking the fault instant at the first, through one
 * handle registered before the first node is hit: a node that fails reverts every node hit before
 * it. A node stopped, shut down or partitioned is waited for after the handle's revert.
 */
export async function injectFault(
  context: FaultContext,
  fault: FaultSpec,
  nodes: readonly string[],
): Promise<FaultHandle> {
  if (fault.type !== "memory-pressure" && fault.type !== "disk-pressure") {
    for (const node of nodes) registerWaitBack(context, node);
  }
  const handle = await context.faults.begin({
    action: faultAction(fault.type),
    nodesHint: nodes,
    ...(fault.durationMs !== undefined ? { durationMs: fault.durationMs } : {}),
    onFirstEffect: () => {
      context.faultStarts([...nodes]);
    },
  });
  for (const [index, node] of nodes.entries()) {
    if (index > 0 && (fault.staggerMs ?? 0) > 0) {
      await context.steps.step(`wait ${fault.staggerMs ?? 0} ms (stagger)`, () =>
        sleep(fault.staggerMs ?? 0, context.signal),
      );
    }
    await context.steps.step(`${fault.type} ${node}`, () => handle.apply([node]));
  }
  return handle;
}

/** Waits out the fault's duration from the fault instant, then reverts it on every node. */
export async function liftFaultAfterDuration(
  context: FaultContext,
  fault: FaultSpec,
  handle: FaultHandle,
): Promise<void> {
  if (fault.durationMs === undefined) return;
  const left = fault.durationMs - context.sinceFaultMs();
  if (left > 0)
    await context.steps.step(`keep the fault for ${fault.durationMs} ms`, () => sleep(left, context.signal));
  const nodes = handle.nodes.map((n) => n.name);
  await context.steps.step(`lift the ${fault.type} on ${nodes.join(", ")}`, () =>
    handle.revert({
      onReverted: () => {
        context.mark(fault.type === "partition" ? PARTITION_HEALED_MILESTONE : PRESSURE_RELIEVED_MILESTONE);
      },
    }),
  );
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
      await uncordonAfterDrain(context, node);
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
