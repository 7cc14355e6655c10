// Nothing this controller puts on a node outlives the fence that put it there:
// - a NodeFence deleted by hand lifts its taints before it goes (its finalizer);
// - a NodeFence of an earlier Node object under the same name (deleted and registered again) ends
//   without touching the new one;
// - a NodeFence whose Node is gone ends;
// - a fencing or out-of-service taint of this controller's that no fence under way owns is removed;
// - a NodeFence named other than its node is refused (never acted on), said once in its status and an Event.
import { errorMessage } from "../errors.js";
import { isNotFound, k8s } from "../kube/client.js";
import { OUT_OF_SERVICE_TAINT } from "../kube/queries.js";
import { assertActing, countFailure, isoNow, type ActionContext } from "./action-context.js";
import { FENCING_TAINT, liftTaints, OUT_OF_SERVICE_VALUE } from "./node-effects.js";
import { EVENT_REASONS } from "./events.js";
import {
  CANCELLED_ANNOTATION,
  fenceOwnsNode,
  isFinished,
  NODE_FENCE_FINALIZER,
  type NodeFence,
} from "./fence-state.js";
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
  // Remembered on the Node before the fence may go, so a restarted controller honours it too.
  if (underWay) await markCancelled(context, node, fence.spec.nodeUID);
  await context.store.removeFinalizer(fence);
  if (underWay || lifted) {
    const message = `NodeFence of ${node} deleted${underWay ? ` at ${fence.status?.step ?? "power-management"}/${fence.status?.phase ?? "new"}` : ""}: ${lifted ? "its taints were lifted" : "no taint to lift"}${underWay ? "; the node is not fenced again until it has been healthy" : ""}`;
    context.log(message);
    await context.event(node, EVENT_REASONS.fenceCancelled, message, "Warning");
  }
  return underWay;
}

const MERGE_PATCH = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);

/** Puts CANCELLED_ANNOTATION on the Node (that Node object only; a Node already gone needs none). */
async function markCancelled(context: ActionContext, node: string, uid: string | undefined): Promise<void> {
  const core = context.kc.makeApiClient(k8s.CoreV1Api);
  try {
    const current = await core.readNode({ name: node });
    if (uid !== undefined && current.metadata?.uid !== uid) return;
    await core.patchNode(
      {
        name: node,
        body: {
          metadata: {
            resourceVersion: current.metadata?.resourceVersion,
            annotations: { [CANCELLED_ANNOTATION]: isoNow(context) },
          },
        },
      },
      MERGE_PATCH,
    );
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/** Is `node` under a cancellation by hand (CANCELLED_ANNOTATION)? */
export function cancelledByHand(node: k8s.V1Node): boolean {
  return node.metadata?.annotations?.[CANCELLED_ANNOTATION] !== undefined;
}

/** Lifts a cancellation by hand from a node that has been healthy: it may be fenced again. */
export async function clearCancelled(context: ActionContext, node: k8s.V1Node): Promise<void> {
  const name = node.metadata?.name ?? "";
  assertActing(context);
  await context.kc.makeApiClient(k8s.CoreV1Api).patchNode(
    {
      name,
      body: {
        metadata: {
          resourceVersion: node.metadata?.resourceVersion,
          annotations: { [CANCELLED_ANNOTATION]: null },
        },
      },
    },
    MERGE_PATCH,
  );
  context.log(`${name} healthy after its fence was cancelled by hand: it may be fenced again`);
}

/**
 * NodeFences not named after their node (made by hand): refused, so that a node has one fence
 * under one name. Said once (status.refused and a FenceRefused Event); a deleted one is let go.
 */
async function refuseMisnamed(context: ActionContext, snapshot: Snapshot): Promise<void> {
  for (const fence of snapshot.misnamed ?? []) {
    try {
      assertActing(context);
      if (fence.metadata.deletionTimestamp) {
        if (fence.metadata.finalizers?.includes(NODE_FENCE_FINALIZER))
          await context.store.removeFinalizer(fence);
        continue;
      }
      if (fence.status?.refused !== undefined) continue;
      const refused = `NodeFence ${fence.metadata.name} names node ${fence.spec.node}, but a NodeFence must be named after its node: refused, nothing done; create it as ${fence.spec.node}`;
      await context.store.writeStatus(fence, {
        step: "recovery",
        phase: "done",
        retries: 0,
        message: refused,
        refused,
        lastTransitionTime: isoNow(context),
      });
      context.log(refused);
      await context.event(fence.spec.node, EVENT_REASONS.fenceRefused, refused, "Warning");
    } catch (error) {
      countFailure(context, error);
      context.log(`refusing NodeFence ${fence.metadata.name}: ${errorMessage(error)}`);
    }
  }
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

/** Refuses misnamed NodeFences, ends fences of vanished Nodes, removes taints no fence under way owns. */
export async function sweepOrphans(context: ActionContext, snapshot: Snapshot): Promise<void> {
  await refuseMisnamed(context, snapshot);
  await endFencesOfDeletedNodes(context, snapshot);
  await liftOrphanTaints(context, snapshot);
}
