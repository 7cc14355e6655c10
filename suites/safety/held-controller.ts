// Safety scenarios that hold the controller right before a fence action, change the node under it
// (powered back on, or registered again as a new Node object), then release it: the fence must
// end without the held action.
import type { FenceAction } from "../../lib/controller/fence-state.js";
import { leaseRenewIntervalMs } from "../../lib/cluster/profiles.js";
import { OUT_OF_SERVICE_MILESTONE } from "../../lib/expect/model.js";
import { OUT_OF_SERVICE_TAINT, readNode } from "../../lib/kube/queries.js";
import { sleep } from "../../lib/util/time.js";
import { nodeLossWorkloads } from "../../lib/scenario/common.js";
import { safetyScenario } from "./define.js";
import { controllerHold, HOLD_RELEASED, NODE_BACK_MS, NODE_POWERED_ON, openWithNodeLost } from "./shared.js";

/**
 * The node is powered back on while the controller is held right before `action` (taint or
 * cleanup): released, the same controller must notice the node running and abandon the fence.
 */
function poweredOnBefore(action: "taint" | "cleanup") {
  const reached = action === "taint" ? "fence:power-management:done" : OUT_OF_SERVICE_MILESTONE;
  return safetyScenario({
    id: `safety/powered-on-before-${action}`,
    title: `the node is powered back on between ${action === "taint" ? "fence and taint" : "taint and cleanup"}: no ${action === "taint" ? "out-of-service taint" : "force deletion"}, the fence is abandoned`,
    requires: ["lifecycle", "fencing"],
    powerOffs: 1,
    never: {
      ...(action === "taint"
        ? { [OUT_OF_SERVICE_MILESTONE]: "the node runs again: it is never tainted out-of-service" }
        : {}),
      "event:PodsForceDeleted": "no pod of a running node is force-deleted by the controller",
      "event:VolumeAttachmentsRemoved": "no volume of a running node is released by the controller",
    },
    windows: (inputs) => {
      const c = inputs.controller;
      return [
        {
          ...inputs.within({
            name: "event:FenceAbandoned",
            after: HOLD_RELEASED,
            minMs: 0,
            maxMs: 2 * c.checkIntervalMs,
            why: "the controller re-checks before it acts, sees the node on, and abandons the fence",
          }),
          // The hold is released once the provider's start returns; the controller may read the
          // power state as on while the start still runs (kind: the container runs before its
          // kubelet does), and abandon then. Never earlier than that.
          minMs: -(inputs.latencies.powerOnMs ?? 0),
        },
        inputs.within({
          name: "fence:recovery:done",
          after: HOLD_RELEASED,
          minMs: 0,
          maxMs:
            NODE_BACK_MS +
            leaseRenewIntervalMs(inputs.profile) +
            c.healthyBeforeUnfenceMs +
            4 * c.checkIntervalMs +
            inputs.profile.defaultNotReadyTolerationSeconds * 1000,
          why: `its taints are lifted once it is back and has been healthy ${c.healthyBeforeUnfenceMs / 1000}s, and its evicted pods are gone`,
        }),
      ];
    },
    workloads: nodeLossWorkloads,
    marks: [NODE_POWERED_ON, HOLD_RELEASED],
    async run(context) {
      const { steps, cluster } = context;
      const hold = controllerHold(context, (a: FenceAction) => a === action);
      const { node } = await openWithNodeLost(context, { count: 0 }, { haltBefore: hold.haltBefore });
      await context.awaitMilestone(reached);
      await steps.step(`power ${node} back on while the controller is held before ${action}`, async () => {
        await cluster.capabilities.lifecycle.startNode(node);
        context.mark(NODE_POWERED_ON);
      });
      // Released as soon as the node runs, before it is Ready again: the controller's next step
      // would be the held one (taint or cleanup); it must re-read the power state and abandon. (Released
      // only once the node was Ready, the controller could see it back and abandon first, before
      // the release: CI saw that once, 0.1 s before.)
      await hold.release();
      await steps.step(`wait until ${node} is back`, () => context.waitNodeBack(node));
      await context.awaitMilestone("event:FenceAbandoned");
      await context.awaitMilestone("fence:recovery:done");
    },
  });
}

export const poweredOnBeforeTaint = poweredOnBefore("taint");
export const poweredOnBeforeCleanup = poweredOnBefore("cleanup");

const REREGISTERED = "node-reregistered";
/** From the new Node object's creation to the re-registration's return (the sim starts its kwok). */
const REREGISTER_RETURN_MS = 1_000;

export const nodeReregisteredMidFence = safetyScenario({
  id: "safety/node-reregistered-mid-fence",
  title:
    "the node is deleted and registered again (a new UID) between fence and taint: the fence ends without touching the new Node object",
  requires: ["lifecycle", "node-reregistration", "fencing"],
  powerOffs: 1,
  never: { [OUT_OF_SERVICE_MILESTONE]: "the new Node object is never tainted for the old one's fence" },
  windows: (inputs) => [
    inputs.within({
      name: "event:FenceSuperseded",
      after: REREGISTERED,
      // The new Node object exists before the re-registration returns (it then starts the node's
      // kwok); the hold does not delay a supersede, which is no fence action.
      minMs: -REREGISTER_RETURN_MS,
      maxMs: 2 * inputs.controller.checkIntervalMs,
      why: "the fence is bound to the old Node's UID: it ends at the first pass that reads the new Node",
    }),
  ],
  workloads: nodeLossWorkloads,
  marks: [REREGISTERED, HOLD_RELEASED],
  async run(context) {
    const { steps, cluster, kc } = context;
    const hold = controllerHold(context, (a: FenceAction) => a === "taint");
    const { node } = await openWithNodeLost(context, { count: 0 }, { haltBefore: hold.haltBefore });
    await context.awaitMilestone("fence:power-management:done");
    await steps.step(`delete ${node} and register it again`, async () => {
      const uid = await cluster.capabilities["node-reregistration"].reregisterNode(node);
      context.progress.info(`${node} registered again as ${uid}`);
      context.mark(REREGISTERED);
      await context.waitNodeBack(node);
    });
    await hold.release();
    await context.awaitMilestone("event:FenceSuperseded");
    await steps.step(`watch 3 checks: ${node} stays untainted`, async () => {
      await sleep(3 * context.inputs.controller.checkIntervalMs, context.signal);
      const tainted = (await readNode(kc, node)).spec?.taints?.some(
        (t) => t.key.startsWith("rekindle.dev/") || t.key === OUT_OF_SERVICE_TAINT,
      );
      if (tainted === true) context.progress.info(`${node} carries a taint of the controller's`);
    });
  },
});
