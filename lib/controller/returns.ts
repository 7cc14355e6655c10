// The ways out of a fence that did not run its course, so that no fence state is a dead end:
// - abort: the node renewed before its power-off was confirmed;
// - abandon: the node was seen running after its power-off was confirmed;
// - reevaluate: a recovery that did not complete within recoveryTimeout.
// Each reads the power state first, where the driver can. A node its driver reports off is fenced,
// whatever its last renewal said (one powered off just after it renewed), so its fence goes on to
// the out-of-service taint, which still waits until the node is judged lost on this controller's
// clock. One reported on recovers. A driver that cannot say ("unknown": the manual driver without
// an annotation, a BMC that does not answer) is taken at the node's word: it renewed, so it runs;
// if that was wrong, the recovery bound re-evaluates the fence later.
import { errorMessage } from "../errors.js";
import { assertActing, isoNow, type ActionContext } from "./action-context.js";
import { clearPowerConfirmation, liftTaints, readPowerState, uidOption } from "./node-effects.js";
import { formatDurationMs } from "./config.js";
import type { PowerState } from "./drivers/types.js";
import { EVENT_REASONS } from "./events.js";
import {
  keepsFenceWhileAlive,
  type FenceObservation,
  type FenceStatus,
  type NodeFence,
} from "./fence-state.js";

/** The node renewed, but its driver reports it off: the fence is confirmed now and goes on. */
/** Back to a confirmed power-off: the next step is the out-of-service taint (once judged lost). */
function writeFencedNow(
  context: ActionContext,
  fence: NodeFence,
  status: FenceStatus,
  message: string,
): Promise<void> {
  return context.store.writeStatus(fence, {
    ...status,
    step: "power-management",
    phase: "done",
    fencedAt: isoNow(context),
    message,
    lastTransitionTime: isoNow(context),
  });
}

async function confirmedAfterRenewal(
  context: ActionContext,
  fence: NodeFence,
  status: FenceStatus,
  message: string,
): Promise<void> {
  const node = fence.spec.node;
  await writeFencedNow(context, fence, status, message);
  context.metrics.fenceConfirmed(node, status, context.now());
  context.log(`${node}: ${message}`);
  await context.event(node, EVENT_REASONS.fenceSucceeded, `${node}: ${message}`);
}

/** Back before a confirmed fence: recover if it runs (or cannot be read); go on if it is off. */
export async function abort(context: ActionContext, fence: NodeFence, status: FenceStatus): Promise<void> {
  const node = fence.spec.node;
  const state = await readPowerState(context, node);
  assertActing(context);
  if (state === "off") {
    await confirmedAfterRenewal(
      context,
      fence,
      status,
      "seen renewing before its power-off was confirmed, but its driver reports it off: the renewal came before the power-off; tainted once judged lost",
    );
    return;
  }
  context.metrics.fenceResult("aborted");
  await context.store.writeStatus(fence, {
    ...status,
    step: "recovery",
    phase: "running",
    message: `node healthy again before a confirmed fence (power ${describePower(state)}): not tainted`,
    lastTransitionTime: isoNow(context),
  });
  await context.event(
    node,
    EVENT_REASONS.fenceAborted,
    `${node} came back before the fence was confirmed (power ${describePower(state)}); no out-of-service taint`,
  );
}

function describePower(state: PowerState): string {
  return state === "unknown" ? "state unknown, taken as on" : state;
}

/**
 * Seen alive after a confirmed power-off. Still at power-management and shortly after the
 * confirmation, the renewal may be one from before the power-off: if the driver still reports the
 * node off, the fence stays (it is judged lost soon). Otherwise the node runs: abandon.
 */
export async function abandon(context: ActionContext, fence: NodeFence, status: FenceStatus): Promise<void> {
  const node = fence.spec.node;
  if (keepsFenceWhileAlive(status, context.now(), context.config)) {
    const state = await readPowerState(context, node);
    assertActing(context);
    if (state === "off") {
      const message =
        "seen renewing right after its power-off was confirmed, and its driver still reports it off: a renewal from before the power-off; tainted once judged lost";
      if (status.message !== message) {
        await context.store.writeStatus(fence, { ...status, message });
        context.log(`${node}: ${message}`);
      }
      return;
    }
  }
  await abandonRunning(context, fence, status);
}

/** After a confirmed power-off the node runs again (someone powered it on): no taint, no more cleanup. */
export async function abandonRunning(
  context: ActionContext,
  fence: NodeFence,
  status: FenceStatus,
): Promise<void> {
  const node = fence.spec.node;
  const what = status.step === "power-management" ? "not tainted" : "cleanup stopped";
  await context.store.writeStatus(fence, {
    ...status,
    step: "recovery",
    phase: "running",
    message: `node running again after the confirmed power-off: ${what}`,
    lastTransitionTime: isoNow(context),
  });
  await context.event(
    node,
    EVENT_REASONS.fenceAbandoned,
    `${node} is running again after its power-off was confirmed: ${what}; waiting for it to settle before lifting the taints`,
    "Warning",
  );
  context.log(`${node} back after the power-off: ${what}`);
}

/**
 * A recovery that did not complete within recoveryTimeout. A node lost, reported off, and never
 * released (an abort or abandon that was wrong) goes back to power-management/done: the taint and
 * cleanup follow. Any other fence ends with its taints lifted, and the node is judged afresh: a lost
 * one gets a new fence, through the guard and the rate limit.
 */
export async function reevaluate(
  context: ActionContext,
  fence: NodeFence,
  status: FenceStatus,
  observation: Pick<FenceObservation, "health">,
): Promise<void> {
  const node = fence.spec.node;
  const waited = formatDurationMs(context.config.recoveryTimeoutMs);
  const cleaned = typeof status.cleanedAt === "string" && status.cleanedAt !== "";
  let power: PowerState | undefined;
  if (observation.health === "unhealthy" && !cleaned) {
    power = await readPowerState(context, node);
    assertActing(context);
    if (power === "off") {
      const message = `recovery did not complete within ${waited}; the node is lost and its driver reports it off: its fence goes on to the taint`;
      await writeFencedNow(context, fence, status, message);
      context.log(`${node}: ${message}`);
      await context.event(node, EVENT_REASONS.fenceResumed, `${node}: ${message}`, "Warning");
      return;
    }
  }
  assertActing(context);
  await liftTaints(context, node, uidOption(fence));
  await clearPowerConfirmation(context, node, fence.spec.nodeUID).catch((error: unknown) => {
    context.log(`${node}: power-state annotation not cleared: ${errorMessage(error)}`);
  });
  const message = `recovery did not complete within ${waited} (node ${observation.health}${power ? `, power ${power}` : ""}): fence ended, taints lifted; the node is judged afresh`;
  await context.store.writeStatus(fence, {
    ...status,
    step: "recovery",
    phase: "done",
    message,
    lastTransitionTime: isoNow(context),
  });
  context.log(`${node}: ${message}`);
  await context.event(node, EVENT_REASONS.recoveryTimedOut, `${node}: ${message}`, "Warning");
}
