// Before a lost node's fence starts (the guard and the fleet allowed it): whether anything stops
// it on the node's own account. A person cancelled its last fence; it holds nothing to release
// (a graceful shutdown ended every pod and released every volume itself, or it is empty: fencing
// would protect nothing, and a node shut down on purpose stays so); it was fenced too often lately;
// or there is no way to fence it (never taint or claim a node we cannot power off).
import { errorMessage } from "../errors.js";
import type { k8s } from "../kube/client.js";
import type { ActionContext } from "./action-context.js";
import { workloadsHeld, type HeldWorkloads } from "./cleanup.js";
import { EVENT_REASONS, type EventReason } from "./events.js";
import { recentFenceStarts, type NodeFence } from "./fence-state.js";
import { cancelledByHand } from "./orphans.js";

export type FenceStartCheck =
  | { start: true; driverName: string; held: HeldWorkloads }
  | { start: false; nothingToRelease: true }
  | { start: false; nothingToRelease?: false; reason: string; message: string; event: EventReason };

export async function checkFenceStart(
  context: Pick<ActionContext, "reads" | "config" | "now" | "driver">,
  node: k8s.V1Node,
  lostBecause: string,
  previous: NodeFence | undefined,
): Promise<FenceStartCheck> {
  const name = node.metadata?.name ?? "";
  const { config } = context;
  if (cancelledByHand(node)) {
    return {
      start: false,
      reason: "CancelledByHand",
      message: `not fencing ${name} (${lostBecause}): its NodeFence was deleted by hand; it is fenced again only after it has been healthy`,
      event: EVENT_REASONS.guardHeld,
    };
  }
  const held = await workloadsHeld(context.reads, name);
  if (held.pods.length + held.volumeAttachments.length === 0) return { start: false, nothingToRelease: true };
  const recent = recentFenceStarts(previous?.status, context.now(), config.fenceRateWindowMs);
  if (recent.length >= config.maxFencesPerWindow) {
    return {
      start: false,
      reason: "RateLimited",
      message: `not fencing ${name} (${lostBecause}): fenced ${recent.length} times in the last ${Math.round(config.fenceRateWindowMs / 60_000)} min (limit ${config.maxFencesPerWindow}); fence it by hand or delete its NodeFence to reset`,
      event: EVENT_REASONS.fenceRateLimited,
    };
  }
  try {
    return { start: true, driverName: (await context.driver(name)).driver.name, held };
  } catch (error) {
    return {
      start: false,
      reason: "NoFenceDriver",
      message: `cannot fence ${name}: ${errorMessage(error)}`,
      event: EVENT_REASONS.fenceFailed,
    };
  }
}
