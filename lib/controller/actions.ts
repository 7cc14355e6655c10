// The fence steps' side effects: starting a fence, and each action `decide` can choose (power off,
// confirm, retry, abort, abandon, taint, clean up, begin and finish recovery). Each step writes its
// outcome to the NodeFence (conditionally: see node-fence-store.ts) before the next step can start,
// and checks right before each side effect that this controller may still act.
import { errorMessage } from "../errors.js";
import { k8s } from "../kube/client.js";
import { OUT_OF_SERVICE_TAINT } from "../kube/queries.js";
import { addTaint } from "../kube/taints.js";
import { assertActing, isoNow, type ActionContext } from "./action-context.js";
import { cleanUpNode, stalePods } from "./cleanup.js";
import { MANUAL_DRIVER_NAME } from "./drivers/manual.js";
import { powerOnIfOff } from "./drivers/power-on.js";
import { hasPowerOn } from "./drivers/types.js";
import { formatDurationMs } from "./config.js";
import { EVENT_REASONS } from "./events.js";
import type { GuardDecision, GuardHoldReason } from "./guard.js";
import {
  clearPowerConfirmation,
  driverCall,
  FENCING_TAINT,
  liftTaints,
  OUT_OF_SERVICE_VALUE,
  readPowerState,
  uidOption,
} from "./node-effects.js";
import { abandon, abandonRunning, abort, reevaluate } from "./returns.js";
import {
  decide,
  retryBackoffMs,
  recentFenceStarts,
  type FenceAction,
  type FenceObservation,
  type FenceStatus,
  type NodeFence,
} from "./fence-state.js";

/**
 * Claims the node: a NodeFence (new, or an earlier finished one restarted) bound to this Node
 * object at power-management/new, then the fencing taint, then the Events. Any manual power-state
 * confirmation on the node is from an earlier incident and is removed first: only one written after
 * this fence started may confirm it. The caller has checked that `driverName` exists. Returns the
 * NodeFence as written, or undefined when the node was not lost any more.
 */
export async function startFence(
  context: ActionContext,
  node: k8s.V1Node,
  reason: string,
  driverName: string,
  previous: NodeFence | undefined,
): Promise<NodeFence | undefined> {
  const name = node.metadata?.name ?? "";
  const uid = node.metadata?.uid ?? "";
  const fenceStarts = [
    ...recentFenceStarts(previous?.status, context.now(), context.config.fenceRateWindowMs),
    isoNow(context),
  ];
  const status: FenceStatus = {
    step: "power-management",
    phase: "new",
    retries: 0,
    message: reason,
    detectedAt: isoNow(context),
    lastTransitionTime: isoNow(context),
    fenceStarts,
  };
  const spec = { node: name, nodeUID: uid, reason, driver: driverName };
  if (!(await stillLost(context, name, "fence start"))) return undefined;
  assertActing(context);
  await clearPowerConfirmation(context, name, uid);
  const fence = previous ? await context.store.restart(previous, spec) : await context.store.create(spec);
  await context.store.writeStatus(fence, status, true);
  await addTaint(context.kc, name, { key: FENCING_TAINT, value: "fencing", effect: "NoSchedule" }, { uid });
  context.log(`fencing ${name}: ${reason}`);
  await context.event(name, EVENT_REASONS.nodeUnhealthy, `${name} is lost: ${reason}`, "Warning");
  await context.event(name, EVENT_REASONS.fenceStarted, `fencing ${name} with driver ${driverName}`);
  return fence;
}

/**
 * The guard, asked before every power action of a fence under way (one the controller started, or
 * one a person made): `decide` says whether it may act now, `held` reports a refusal (once per reason).
 */
export interface PowerGuard {
  decide: () => GuardDecision;
  /** Says why the power action waits (once per reason; its Event is written in the background). */
  held: (reason: string, message: string) => void;
}

/** The guard's holds that count nodes (checked when a fence starts), not the node itself. */
const BUDGET_REASONS: ReadonlySet<GuardHoldReason> = new Set(["ClusterBudget", "ZoneBudget"]);

/** The actions that switch a node's power (a retry leads straight to a power-off). */
const POWER_ACTIONS: ReadonlySet<FenceAction> = new Set(["power-off", "retry"]);

/**
 * Takes the next step of a fence under way; `haltBefore` (a test seam) is never performed; a power
 * action (or any first action of a NodeFence made by hand) the guard refuses waits, and the
 * NodeFence's message (its Processing condition) says why.
 */
export async function progressFence(
  context: ActionContext,
  fence: NodeFence,
  observation: Omit<FenceObservation, "stalePods" | "nowMs">,
  haltBefore?: FenceAction | ((action: FenceAction, node: string) => boolean),
  guard?: PowerGuard,
): Promise<FenceAction> {
  const node = fence.spec.node;
  const status: FenceStatus = fence.status ?? { step: "power-management", phase: "new", retries: 0 };
  const stale = status.step === "recovery" ? await stalePods(context.reads, node) : 0;
  const full = { ...observation, stalePods: stale, nowMs: context.now() };
  const action = decide(status, full, context.config);
  if (action === "wait") return action;
  if (typeof haltBefore === "function" ? haltBefore(action, node) : action === haltBefore) return "wait";
  // A NodeFence not started yet (made by hand: no transition written) begins only when the whole
  // guard allows. One under way passed the budgets when it started; its power actions still wait
  // while paused, and for an excluded, control-plane or unselected node.
  const started = status.lastTransitionTime !== undefined;
  const gated = POWER_ACTIONS.has(action) || !started;
  const decision = gated ? guard?.decide() : undefined;
  const budget = decision?.allowed === false && BUDGET_REASONS.has(decision.reason);
  if (decision !== undefined && !decision.allowed && !(started && budget)) {
    const message = `held by the guard before ${action} (${decision.reason}): ${decision.message}`;
    guard?.held(decision.reason, message);
    if (status.message !== message) {
      assertActing(context);
      await context.store.writeStatus(fence, { ...status, message });
    }
    return "wait";
  }
  if (ON_A_LOST_NODE.has(action) && !(await stillLost(context, node, action))) return "wait";
  assertActing(context);
  await ACTIONS[action](context, fence, status, full);
  return action;
}

/**
 * The steps that may follow one another within one pass (each written before the next is decided):
 * a node read off goes from power-off to cleanup in one pass instead of four.
 */
const CHAINED: ReadonlySet<FenceAction> = new Set(["power-off", "confirm-off", "taint", "cleanup"]);

/**
 * progressFence, again for as long as the step taken moved the fence on and may be followed at
 * once (a power-off its driver confirms at once, the taint, the first cleanup): at most four steps.
 */
export async function progressFenceSteps(
  context: ActionContext,
  fence: NodeFence,
  observation: Omit<FenceObservation, "stalePods" | "nowMs">,
  haltBefore?: FenceAction | ((action: FenceAction, node: string) => boolean),
  guard?: PowerGuard,
): Promise<void> {
  const state = () => `${fence.status?.step ?? ""}/${fence.status?.phase ?? ""}`;
  for (let steps = 0; steps < CHAINED.size; steps++) {
    const before = state();
    const action = await progressFence(context, fence, observation, haltBefore, guard);
    if (!CHAINED.has(action) || state() === before) return;
  }
}

/** The actions that harm a live node: each is taken only if the node is still lost right then. */
const ON_A_LOST_NODE: ReadonlySet<FenceAction> = new Set(["power-off", "taint", "cleanup"]);

/**
 * Re-reads the node right before `what`: the pass decided on its read, which may be seconds old
 * (a slow driver or API call for another node, say). False, with a log line, when the node is not
 * lost now: the next pass decides again on what it reads then.
 */
async function stillLost(context: ActionContext, node: string, what: string): Promise<boolean> {
  const now = await context.lostNow(node);
  if (now.lost) return true;
  context.log(`${node}: no ${what} now: ${now.why}`);
  return false;
}

type ActionStep = (
  context: ActionContext,
  fence: NodeFence,
  status: FenceStatus,
  observation: FenceObservation,
) => Promise<void>;

async function powerOff(context: ActionContext, fence: NodeFence, status: FenceStatus): Promise<void> {
  const node = fence.spec.node;
  const { driver, target } = await context.driver(node);
  try {
    await driverCall(context, driver.name, (signal) => driver.powerOff(target, signal));
    await context.store.writeStatus(fence, {
      ...status,
      phase: "running",
      message: `power off requested via ${driver.name}`,
      lastTransitionTime: isoNow(context),
    });
  } catch (error) {
    assertActing(context);
    await fenceFailed(context, fence, status, `power off via ${driver.name} failed: ${errorMessage(error)}`);
  }
}

async function confirmOff(context: ActionContext, fence: NodeFence, status: FenceStatus): Promise<void> {
  const { config } = context;
  const node = fence.spec.node;
  const { driver } = await context.driver(node);
  const state = await readPowerState(context, node);
  // A person needs longer than a BMC: the manual driver waits as long as configured.
  const limitMs =
    driver.name === MANUAL_DRIVER_NAME ? config.manualConfirmTimeoutMs : config.fenceConfirmTimeoutMs;
  assertActing(context);
  if (state === "off") {
    await context.store.writeStatus(fence, {
      ...status,
      phase: "done",
      fencedAt: isoNow(context),
      message: `power off confirmed by ${driver.name}`,
      lastTransitionTime: isoNow(context),
    });
    context.metrics.fenceConfirmed(node, status, context.now());
    await context.event(
      node,
      EVENT_REASONS.fenceSucceeded,
      `${node} powered off (confirmed by ${driver.name})`,
    );
  } else if (context.now() - Date.parse(status.lastTransitionTime ?? "") > limitMs) {
    await fenceFailed(
      context,
      fence,
      status,
      `power off not confirmed within ${formatDurationMs(limitMs)} (driver says ${state})`,
    );
  }
}

async function retry(context: ActionContext, fence: NodeFence, status: FenceStatus): Promise<void> {
  await context.store.writeStatus(fence, {
    ...status,
    phase: "new",
    message: `retry ${status.retries + 1}`,
    lastTransitionTime: isoNow(context),
  });
}

/**
 * Re-reads the power state right before a side effect that is only safe on a powered-off node.
 * "off": go on. "on": the node was powered back on, so abandon the fence. "unknown": wait a pass.
 */
async function stillPoweredOff(
  context: ActionContext,
  fence: NodeFence,
  status: FenceStatus,
): Promise<boolean> {
  const state = await readPowerState(context, fence.spec.node);
  assertActing(context);
  if (state === "off") return true;
  if (state === "on") await abandonRunning(context, fence, status);
  else context.log(`${fence.spec.node}: power state unknown; ${status.step} waits for a confirmed off`);
  return false;
}

async function taint(context: ActionContext, fence: NodeFence, status: FenceStatus): Promise<void> {
  const node = fence.spec.node;
  if (!(await stillPoweredOff(context, fence, status))) return;
  await addTaint(
    context.kc,
    node,
    { key: OUT_OF_SERVICE_TAINT, value: OUT_OF_SERVICE_VALUE, effect: "NoExecute" },
    uidOption(fence),
  );
  await context.store.writeStatus(fence, {
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
    `${node} tainted ${OUT_OF_SERVICE_TAINT}=${OUT_OF_SERVICE_VALUE}:NoExecute after a confirmed fence`,
  );
}

async function cleanup(context: ActionContext, fence: NodeFence, status: FenceStatus): Promise<void> {
  if (!(await stillPoweredOff(context, fence, status))) return;
  await cleanUpNode(context, fence, status);
}

async function beginRecovery(context: ActionContext, fence: NodeFence, status: FenceStatus): Promise<void> {
  const node = fence.spec.node;
  if (context.config.powerOnAfterFence) {
    const { driver, target } = await context.driver(node);
    if (hasPowerOn(driver)) {
      assertActing(context);
      // Only a node the driver reports off is powered on; one already on, or unreadable, is not switched.
      const outcome = await driverCall(context, driver.name, (signal) =>
        powerOnIfOff(driver, target, signal),
      ).catch((error: unknown) => `not powered on: ${errorMessage(error)}`);
      context.log(`${node} after its fence: ${outcome}`);
    }
  }
  await context.store.writeStatus(fence, {
    ...status,
    step: "recovery",
    phase: "running",
    message: "waiting for the node to return",
    lastTransitionTime: isoNow(context),
  });
}

async function finishRecovery(context: ActionContext, fence: NodeFence, status: FenceStatus): Promise<void> {
  const node = fence.spec.node;
  const left = await stalePods(context.reads, node);
  await liftTaints(context, node, uidOption(fence));
  await clearPowerConfirmation(context, node, fence.spec.nodeUID);
  await context.store.writeStatus(fence, {
    ...status,
    step: "recovery",
    phase: "done",
    recoveredAt: isoNow(context),
    message:
      left === 0
        ? "node back; taints removed"
        : `node back; taints removed with ${left} pod(s) still being deleted after ${context.config.staleWaitMs} ms`,
    lastTransitionTime: isoNow(context),
  });
  await context.event(
    node,
    EVENT_REASONS.nodeRecovered,
    `${node} is back: out-of-service and fencing taints removed${left === 0 ? "" : ` (${left} pod(s) still being deleted)`}`,
    left === 0 ? "Normal" : "Warning",
  );
  context.log(`${node} recovered`);
}

/** Every action but "wait" (which does nothing), by name: the compiler checks none is missing. */
const ACTIONS: Record<Exclude<FenceAction, "wait">, ActionStep> = {
  "power-off": powerOff,
  "confirm-off": confirmOff,
  retry,
  abort,
  abandon,
  taint,
  cleanup,
  "begin-recovery": beginRecovery,
  "finish-recovery": finishRecovery,
  reevaluate,
};

async function fenceFailed(
  context: ActionContext,
  fence: NodeFence,
  status: FenceStatus,
  message: string,
): Promise<void> {
  const node = fence.spec.node;
  context.metrics.fenceResult("failure");
  const retries = status.retries + 1;
  // Retried for as long as the fence is under way and the guard allows: say when.
  const next = formatDurationMs(retryBackoffMs(retries, context.config));
  const told = `${message}; attempt ${retries} failed, retrying in ${next} while the node stays lost and the guard allows`;
  await context.store.writeStatus(fence, {
    ...status,
    phase: "error",
    retries,
    message: told,
    lastTransitionTime: isoNow(context),
  });
  await context.event(node, EVENT_REASONS.fenceFailed, told, "Warning");
  context.log(`fence of ${node} failed: ${told}`);
}
