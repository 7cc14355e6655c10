// The node-level side effects a fence's steps (actions.ts) and its ways out (returns.ts) share:
// this controller's two taints and lifting them, reading the power state through the driver, a
// bounded driver call, and clearing the manual driver's power-state confirmation. A leaf of its
// own, so the steps and the ways out import it rather than each other.
import { errorMessage } from "../errors.js";
import { k8s } from "../kube/client.js";
import { OUT_OF_SERVICE_TAINT } from "../kube/queries.js";
import { removeTaint } from "../kube/taints.js";
import type { BoundedSignal } from "../util/abort.js";
import { untilAborted } from "../util/time.js";
import type { ActionContext } from "./action-context.js";
import { POWER_STATE_ANNOTATION } from "./drivers/manual.js";
import type { PowerState } from "./drivers/types.js";
import type { NodeFence } from "./fence-state.js";

/** The controller's own taint while it fences a node: nothing new lands there meanwhile. */
export const FENCING_TAINT = "rekindle.dev/fencing";
/**
 * The value of the out-of-service taint this controller adds. The Kubernetes controllers read only
 * the key; the value tells this controller's taint from one a person added (which it never lifts).
 */
export const OUT_OF_SERVICE_VALUE = "rekindle-fenced";

/** Removes this controller's taints (never a person's out-of-service taint with another value). */
export async function liftTaints(
  context: Pick<ActionContext, "kc">,
  node: string,
  options: { uid?: string } = {},
): Promise<boolean> {
  const outOfService = await removeTaint(context.kc, node, OUT_OF_SERVICE_TAINT, "NoExecute", {
    ...options,
    value: OUT_OF_SERVICE_VALUE,
  });
  const fencing = await removeTaint(context.kc, node, FENCING_TAINT, undefined, options);
  return outOfService || fencing;
}

/** The node's power state from its driver, bounded by the driver signal; failures read "unknown". */
export async function readPowerState(context: ActionContext, node: string): Promise<PowerState> {
  try {
    const { driver, target } = await context.driver(node);
    return await driverCall(context, driver.name, (signal) => driver.powerState(target, signal));
  } catch (error) {
    context.log(`power state of ${node} unreadable: ${errorMessage(error)}`);
    return "unknown";
  }
}

/**
 * One driver call, bounded even if the driver ignores it (by `bounded`, default the driver signal
 * of the pass); failures are counted. `bounded` is disposed when the call ends.
 */
export async function driverCall<T>(
  context: Pick<ActionContext, "driverSignal" | "metrics">,
  driver: string,
  call: (signal: AbortSignal) => Promise<T>,
  bounded: BoundedSignal = context.driverSignal(),
): Promise<T> {
  try {
    return await untilAborted(call(bounded.signal), bounded.signal);
  } catch (error) {
    context.metrics.driverError(driver, error);
    throw error;
  } finally {
    bounded.dispose();
  }
}

/** Removes the manual driver's power-state annotation (of this Node object only). */
export async function clearPowerConfirmation(
  context: ActionContext,
  node: string,
  uid: string | undefined,
): Promise<void> {
  const core = context.kc.makeApiClient(k8s.CoreV1Api);
  const current = await core.readNode({ name: node });
  if (current.metadata?.annotations?.[POWER_STATE_ANNOTATION] === undefined) return;
  if (uid !== undefined && current.metadata.uid !== uid) return;
  await core.patchNode(
    {
      name: node,
      body: {
        metadata: {
          resourceVersion: current.metadata.resourceVersion,
          annotations: { [POWER_STATE_ANNOTATION]: null },
        },
      },
    },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
  );
}

export function uidOption(fence: NodeFence): { uid?: string } {
  return fence.spec.nodeUID === undefined ? {} : { uid: fence.spec.nodeUID };
}
