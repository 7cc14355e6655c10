// Safety when every zone goes silent at once: the cause is likelier the control plane's network than
// the nodes, so nothing is fenced (reference 003: upstream stops all evictions then;
// lib/controller/fleet.ts). The controller counts a node that went silent with a lost one and has
// missed a renewal as lost at once, before it is judged lost itself: this scenario proves it counts
// it in the zones' states too, not only in the budgets. Each worker is put in a zone of its own
// (labels restored afterwards), so no two are "silent together" in one zone and the
// correlated-silence hold cannot stand in; maxUnhealthy allows every worker, so the guard cannot
// either. All are cut off the API server at once, held, then healed before node-monitor-grace-period.
import { leaseRenewIntervalMs } from "../../lib/cluster/profiles.js";
import { EVENT_REASONS } from "../../lib/controller/events.js";
import type { Milestone } from "../../lib/observe/milestones.js";
import type { Transition } from "../../lib/observe/types.js";
import { injectFault } from "../../lib/scenario/common.js";
import type { DeriveContext } from "../../lib/scenario/harness.js";
import { occupyEveryWorker, startSafetyController } from "../../lib/scenario/safety.js";
import { safetyScenario } from "./define.js";
import { everyFaultNodeHad, healThenWatch, PARTITION_HEALED, relabelZones } from "./shared.js";

/** Every cut node has had its FenceHeldAllZonesDisrupted Event. */
const HELD_ALL = "all-zones-disrupted-held-all";

/** HELD_ALL once every fault node has had a FenceHeldAllZonesDisrupted Event after the fault. */
function derive(transitions: readonly Transition[], context: DeriveContext): Milestone[] {
  return everyFaultNodeHad(transitions, context, EVENT_REASONS.allZonesDisruptedHeld, HELD_ALL);
}

export const everyZoneSilentHealed = safetyScenario({
  id: "safety/every-zone-silent-healed",
  title:
    "every worker, each in a zone of its own, cut off the API server at once with maxUnhealthy allowing them all: held as every zone disrupted, nothing powered off",
  requires: ["partition", "fencing"],
  powerOffs: 0,
  noFence: "every zone silent at once is held (the network, likelier than the nodes), and this cut heals",
  windows: (inputs) => {
    const c = inputs.controller;
    return [
      inputs.within({
        name: HELD_ALL,
        after: "fault-injected",
        minMs: Math.max(0, c.unhealthyAfterMs - leaseRenewIntervalMs(inputs.profile) - c.checkIntervalMs),
        maxMs: c.unhealthyAfterMs + 4 * c.checkIntervalMs,
        why: "each held as it is judged lost: its peers, silent past a renewal, count as not ready in their zones",
      }),
    ];
  },
  marks: [HELD_ALL, PARTITION_HEALED],
  derive,
  note: () => "every worker in a zone of its own, all cut until each is held, then healed; maxUnhealthy 100%",
  async run(context) {
    const { inputs } = context;
    const workers = await occupyEveryWorker(context);
    await relabelZones(
      context,
      workers,
      `put each of ${workers.join(", ")} in a zone of its own`,
      (w) => `zone-of-${w}`,
    );
    await startSafetyController(context, { count: 0 }, { config: { maxUnhealthy: "100%" } });
    const cut = await injectFault(context, `cut ${workers.join(", ")} off the API server`, {
      action: { kind: "partition" },
      nodes: workers,
      // The fault's own deadline (it reverts itself if rekindle dies): well past the hold.
      durationMs: 4 * (inputs.controller.unhealthyAfterMs + 4 * inputs.controller.checkIntervalMs) + 60_000,
      concurrent: true,
    });
    await context.awaitMilestone(HELD_ALL);
    await healThenWatch(context, cut, workers, "nothing may be powered off");
  },
});
