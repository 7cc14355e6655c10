// The fence steps' side effects: starting a fence, and each action `decide` can choose (power off,
// confirm, retry, abort, taint, clean up, begin and finish recovery). Each step writes its outcome
// to the NodeFence before the next step can start.
import { errorMessage } from "../errors.js";
import { OUT_OF_SERVICE_TAINT } from "../kube/queries.js";
import { addTaint, removeTaint } from "../kube/taints.js";
import { isoNow, type ActionContext } from "./action-context.js";
import { cleanUpNode, stalePods } from "./cleanup.js";
import { hasPowerOn } from "./drivers/types.js";
import { EVENT_REASONS } from "./events.js";
import { decide, type FenceAction, type FenceStatus, type NodeFence } from "./fence-state.js";
import { METRICS } from "./metrics.js";

/** The controller's own taint while it fences a node: nothing new lands there meanwhile. */
export const FENCING_TAINT = "rekindle.dev/fencing";

/**
 * Claims the node: a NodeFence (new, or an earlier finished one restarted) at power-management/new,
 * then the fencing taint, then the Events. The caller has checked that `driverName` exists.
 */
export async function startFence(
  context: ActionContext,
  node: string,
  reason: string,
  driverName: string,
  previous: NodeFence | undefined,
): Promise<void> {
  const status: FenceStatus = {
    step: "power-management",
    phase: "new",
    retries: 0,
    message: reason,
    detectedAt: isoNow(context),
    lastTransitionTime: isoNow(context),
  };
  const spec = { node, reason, driver: driverName };
  if (previous) await context.store.restart(spec);
  else await context.store.create(spec);
  await context.store.writeStatus(node, status, true);
  await addTaint(context.kc, node, { key: FENCING_TAINT, value: "fencing", effect: "NoSchedule" });
  context.log(`fencing ${node}: ${reason}`);
  await context.event(node, EVENT_REASONS.nodeUnhealthy, `${node} is lost: ${reason}`, "Warning");
  await context.event(node, EVENT_REASONS.fenceStarted, `fencing ${node} with driver ${driverName}`);
}

/** Takes the next step of a fence under way; `haltBefore` (a test seam) is never performed. */
export async function progressFence(
  context: ActionContext,
  fence: NodeFence,
  nodeHealthy: boolean,
  haltBefore?: FenceAction,
): Promise<void> {
  const node = fence.spec.node;
  const status: FenceStatus = fence.status ?? { step: "power-management", phase: "new", retries: 0 };
  const stale = status.step === "recovery" ? await stalePods(context.kc, node) : 0;
  const action = decide(status, { nodeHealthy, stalePods: stale, nowMs: context.now() }, context.config);
  if (action === "wait" || action === haltBefore) return;
  await ACTIONS[action](context, node, status);
}

type ActionStep = (context: ActionContext, node: string, status: FenceStatus) => Promise<void>;

async function powerOff(context: ActionContext, node: string, status: FenceStatus): Promise<void> {
  const { driver, target } = await context.driver(node);
  try {
    await driver.powerOff(target);
    await context.store.writeStatus(node, {
      ...status,
      phase: "running",
      message: `power off requested via ${driver.name}`,
      lastTransitionTime: isoNow(context),
    });
  } catch (error) {
    await fenceFailed(context, node, status, `power off via ${driver.name} failed: ${errorMessage(error)}`);
  }
}

async function confirmOff(context: ActionContext, node: string, status: FenceStatus): Promise<void> {
  const { config, metrics } = context;
  const { driver, target } = await context.driver(node);
  const state = await driver.powerState(target).catch(() => "unknown" as const);
  if (state === "off") {
    await context.store.writeStatus(node, {
      ...status,
      phase: "done",
      fencedAt: isoNow(context),
      message: `power off confirmed by ${driver.name}`,
      lastTransitionTime: isoNow(context),
    });
    metrics.inc(METRICS.fences[0], METRICS.fences[1], { result: "success" });
    const detected = status.detectedAt ? Date.parse(status.detectedAt) : context.now();
    metrics.set(METRICS.timeToFence[0], METRICS.timeToFence[1], (context.now() - detected) / 1000, { node });
    await context.event(
      node,
      EVENT_REASONS.fenceSucceeded,
      `${node} powered off (confirmed by ${driver.name})`,
    );
  } else if (context.now() - Date.parse(status.lastTransitionTime ?? "") > config.fenceConfirmTimeoutMs) {
    await fenceFailed(
      context,
      node,
      status,
      `power off not confirmed within ${config.fenceConfirmTimeoutMs} ms (driver says ${state})`,
    );
  }
}

async function retry(context: ActionContext, node: string, status: FenceStatus): Promise<void> {
  await context.store.writeStatus(node, {
    ...status,
    phase: "new",
    message: `retry ${status.retries + 1}`,
    lastTransitionTime: isoNow(context),
  });
}

async function abort(context: ActionContext, node: string, status: FenceStatus): Promise<void> {
  context.metrics.inc(METRICS.fences[0], METRICS.fences[1], { result: "aborted" });
  await context.store.writeStatus(node, {
    ...status,
    step: "recovery",
    phase: "running",
    message: "node healthy again before a confirmed fence: not tainted",
    lastTransitionTime: isoNow(context),
  });
  await context.event(
    node,
    EVENT_REASONS.fenceAborted,
    `${node} came back before the fence was confirmed; no out-of-service taint`,
  );
}

async function taint(context: ActionContext, node: string, status: FenceStatus): Promise<void> {
  await addTaint(context.kc, node, { key: OUT_OF_SERVICE_TAINT, value: "nodeshutdown", effect: "NoExecute" });
  await context.store.writeStatus(node, {
    ...status,
    step: "taint",
    phase: "done",
    taintedAt: isoNow(context),
    message: "out-of-service taint added",
    lastTransitionTime: isoNow(context),
  });
  await context.event(
    node,
    EVENT_REASONS.outOfServiceTainted,
    `${node} tainted ${OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute after a confirmed fence`,
  );
}

async function beginRecovery(context: ActionContext, node: string, status: FenceStatus): Promise<void> {
  if (context.config.powerOnAfterFence) {
    const { driver, target } = await context.driver(node);
    if (hasPowerOn(driver)) await driver.powerOn(target);
  }
  await context.store.writeStatus(node, {
    ...status,
    step: "recovery",
    phase: "running",
    message: "waiting for the node to return",
    lastTransitionTime: isoNow(context),
  });
}

async function finishRecovery(context: ActionContext, node: string, status: FenceStatus): Promise<void> {
  await removeTaint(context.kc, node, OUT_OF_SERVICE_TAINT);
  await removeTaint(context.kc, node, FENCING_TAINT);
  await context.store.writeStatus(node, {
    ...status,
    step: "recovery",
    phase: "done",
    recoveredAt: isoNow(context),
    message: "node back; taints removed",
    lastTransitionTime: isoNow(context),
  });
  await context.event(
    node,
    EVENT_REASONS.nodeRecovered,
    `${node} is back: out-of-service and fencing taints removed`,
  );
  context.log(`${node} recovered`);
}

/** Every action but "wait" (which does nothing), by name: the compiler checks none is missing. */
const ACTIONS: Record<Exclude<FenceAction, "wait">, ActionStep> = {
  "power-off": powerOff,
  "confirm-off": confirmOff,
  retry,
  abort,
  taint,
  cleanup: cleanUpNode,
  "begin-recovery": beginRecovery,
  "finish-recovery": finishRecovery,
};

async function fenceFailed(
  context: ActionContext,
  node: string,
  status: FenceStatus,
  message: string,
): Promise<void> {
  context.metrics.inc(METRICS.fences[0], METRICS.fences[1], { result: "failure" });
  await context.store.writeStatus(node, {
    ...status,
    phase: "error",
    retries: status.retries + 1,
    message,
    lastTransitionTime: isoNow(context),
  });
  await context.event(node, EVENT_REASONS.fenceFailed, message, "Warning");
  context.log(`fence of ${node} failed: ${message}`);
}
