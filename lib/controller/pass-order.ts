// The order of a pass's work. Decisions first, for every node: nothing to do, waiting for peers,
// holds, then fence starts. Then the steps of fences: those started now and those under way. A
// fence's steps (driver calls, the taint, the cleanup) take seconds; taken in the slot of its start,
// a zone's worth of fences made the later nodes' decisions wait for the whole pass
// (bench:controller at 1000 workers: 334 nodes lost at once, passes past their 30 s bound).
import { errorMessage } from "../errors.js";
import type { k8s } from "../kube/client.js";
import { forEachBounded } from "../util/bounded-parallel.js";
import { countFailure, type ActionContext } from "./action-context.js";
import type { NodeHealth } from "./detect.js";
import { cancelledByHand, clearCancelled } from "./orphans.js";
import type { NodePlan } from "./plan.js";

/** The plans a pass decides on; the rest ("progress", "release", "supersede") are a fence's steps. */
const DECIDING: ReadonlySet<NodePlan["kind"]> = new Set(["none", "wait-for-peers", "hold", "fence"]);

/** The deciding plans (fence starts last among them), and the steps of fences under way, each in plan order. */
export function decidingFirst<P extends { plan: NodePlan }>(
  plans: readonly P[],
): { deciding: P[]; stepping: P[] } {
  const deciding = plans.filter((p) => DECIDING.has(p.plan.kind));
  // Stable: plan order within each group.
  deciding.sort((a, b) => Number(a.plan.kind === "fence") - Number(b.plan.kind === "fence"));
  return { deciding, stepping: plans.filter((p) => !DECIDING.has(p.plan.kind)) };
}

/**
 * Runs `work` for up to nodeConcurrency nodes at once; a node's failure is counted and logged,
 * not the pass's. A healthy node's cancellation by hand is cleared first (it is kept on the Node:
 * it lasts until the node has been healthy, restarts too).
 */
export async function forEachNode<T extends { name: string; node?: k8s.V1Node }>(
  context: ActionContext,
  health: ReadonlyMap<string, NodeHealth>,
  items: readonly T[],
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  const { config, log } = context;
  await forEachBounded(items, config.nodeConcurrency, async (item) => {
    const { name, node } = item;
    try {
      if (node && health.get(name)?.state === "healthy" && cancelledByHand(node)) {
        await clearCancelled(context, node).catch((error: unknown) => {
          countFailure(context, error);
          log(`${name}: cancellation by hand not cleared: ${errorMessage(error)}`);
        });
      }
      await work(item);
    } catch (error) {
      countFailure(context, error);
      log(`node ${name}: ${errorMessage(error)}`);
    }
  });
}
