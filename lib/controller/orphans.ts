// Nothing this controller puts on a node outlives the fence that put it there:
// - a NodeFence deleted by hand lifts its taints before it goes (its finalizer);
// - a NodeFence of an earlier Node object under the same name (deleted and registered again) ends
//   without touching the new one;
// - a NodeFence whose Node is gone ends;
// - a fencing or out-of-service taint of this controller's that no fence under way owns is removed.
import { errorMessage } from "../errors.js";
import { isNotFound, type k8s } from "../kube/client.js";
import { OUT_OF_SERVICE_TAINT } from "../kube/queries.js";
import { assertActing, countFailure, isoNow, type ActionContext } from "./action-context.js";
import { FENCING_TAINT, liftTaints, OUT_OF_SERVICE_VALUE } from "./actions.js";
import { EVENT_REASONS } from "./events.js";
import { fenceOwnsNode, isFinished, NODE_FENCE_FINALIZER, type NodeFence } from "./fence-state.js";
import type { Snapshot } from "./snapshot.js";

/**
 * A NodeFence being deleted: lift its taints from its Node object, then drop the finalizer.
 * Returns whether the fence was still under way (a person cancelled it).
 */
export async function releaseFence(context: ActionContext, fence: NodeFence): Promise<boolean> {
  const node = fence.spec.node;
  const underWay = !isFinished(fence.status);
  if (!fence.metadata.finalizers?.includes(NODE_FENCE_FINALIZER)) return false;
  assertActing(context);
  const lifted = await liftTaints(
    context,
    node,
    fence.spec.nodeUID === undefined ? {} : { uid: fence.spec.nodeUID },
  ).catch((error: unknown) => {
    if (isNotFound(error)) return false;
    throw error;
  });
  await context.store.removeFinalizer(fence);
  if (underWay || lifted) {
    const message = `NodeFence of ${node} deleted${underWay ? ` at ${fence.status?.step ?? "power-management"}/${fence.status?.phase ?? "new"}` : ""}: ${lifted ? "its taints were lifted" : "no taint to lift"}${underWay ? "; the node is not fenced again until it has been healthy" : ""}`;
    context.log(message);
    await context.event(node, EVENT_REASONS.fenceCancelled, message, "Warning");
  }
  return underWay;
}

/** Marks a fence finished (recovery/done) with `message`, touching nothing else. */
async function endFence(context: ActionContext, fence: NodeFence, message: string): Promise<void> {
  assertActing(context);
  await context.store.writeStatus(fence, {
    ...(fence.status ?? { step: "power-management", phase: "new", retries: 0 }),
    step: "recovery",
    phase: "done",
    recoveredAt: isoNow(context),
    message,
    lastTransitionTime: isoNow(context),
  });
}

/** The Node was deleted and registered again: the fence was for the old object; end it untouched. */
export async function supersedeFence(context: ActionContext, fence: NodeFence): Promise<void> {
  const node = fence.spec.node;
  await endFence(
    context,
    fence,
    `Node ${node} was registered again (new UID): this fence ended without touching the new Node object`,
  );
  context.log(`${node} registered again mid-fence: fence ended`);
  await context.event(
    node,
    EVENT_REASONS.fenceSuperseded,
    `${node} was deleted and registered again while it was being fenced: the fence ended; the new Node object is judged afresh`,
    "Warning",
  );
}

function ours(taint: k8s.V1Taint): boolean {
  return (
    taint.key === FENCING_TAINT ||
    (taint.key === OUT_OF_SERVICE_TAINT &&
      taint.effect === "NoExecute" &&
      taint.value === OUT_OF_SERVICE_VALUE)
  );
}

/** Ends the fences of Nodes that were deleted; a deleted fence of a deleted Node is let go. */
async function endFencesOfDeletedNodes(context: ActionContext, snapshot: Snapshot): Promise<void> {
  const names = new Set(snapshot.nodes.map((n) => n.metadata?.name ?? ""));
  for (const fence of snapshot.fences.values()) {
    if (names.has(fence.spec.node)) continue;
    if (fence.metadata.deletionTimestamp) {
      // Deleted with its Node gone: nothing to lift; let it go (the node loop never sees it).
      try {
        assertActing(context);
        await context.store.removeFinalizer(fence);
      } catch (error) {
        countFailure(context, error);
        context.log(`releasing the NodeFence of deleted node ${fence.spec.node}: ${errorMessage(error)}`);
      }
      continue;
    }
    if (isFinished(fence.status)) continue;
    try {
      await endFence(context, fence, `Node ${fence.spec.node} was deleted: fence ended`);
      context.log(`${fence.spec.node} deleted mid-fence: fence ended`);
    } catch (error) {
      countFailure(context, error);
      context.log(`ending the fence of deleted node ${fence.spec.node}: ${errorMessage(error)}`);
    }
  }
}

/** Removes this controller's taints from nodes that no fence under way owns. */
async function liftOrphanTaints(context: ActionContext, snapshot: Snapshot): Promise<void> {
  for (const node of snapshot.nodes) {
    const name = node.metadata?.name ?? "";
    if (!(node.spec?.taints ?? []).some(ours)) continue;
    const fence = snapshot.fences.get(name);
    const owned =
      fence !== undefined &&
      !isFinished(fence.status) &&
      !fence.metadata.deletionTimestamp &&
      fenceOwnsNode(fence, node);
    if (owned) continue;
    try {
      assertActing(context);
      if (await liftTaints(context, name, { uid: node.metadata?.uid ?? "" })) {
        const message = `removed this controller's taints from ${name}: no fence under way owns them`;
        context.log(message);
        await context.event(name, EVENT_REASONS.orphanTaintRemoved, message, "Warning");
      }
    } catch (error) {
      countFailure(context, error);
      context.log(`orphan taints of ${name}: ${errorMessage(error)}`);
    }
  }
}

/** Ends fences of vanished Nodes and removes this controller's taints that no fence under way owns. */
export async function sweepOrphans(context: ActionContext, snapshot: Snapshot): Promise<void> {
  await endFencesOfDeletedNodes(context, snapshot);
  await liftOrphanTaints(context, snapshot);
}
