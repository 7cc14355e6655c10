// A small zone partially disrupted that returns part-way: while it is PartialDisruption its taint
// rate is 0, so the judged node lost then waits untainted; once enough nodes are back for Normal,
// the rate is swapped back to --node-eviction-rate and the node still lost is tainted at once and
// its pod evicted after the toleration. The swap back is why no profile sets a rate of exactly 1:
// upstream's swap from 0 to 1 is a no-op (the "never" limiter reports 1), and nothing would be
// tainted again.
import { leaseRenewIntervalMs } from "../../lib/cluster/profiles.js";
import { taintGapMs, unknownAfterStopMs } from "../../lib/expect/zone-disruption.js";
import type { ExpectedMilestone } from "../../lib/expect/windows.js";
import { carveZone, deployWebOn, firstWorkers, partialReached } from "../../lib/scenario/zone-carve.js";
import { nameList } from "../../lib/util/name-list.js";
import { sleep } from "../../lib/util/time.js";
import { judgedEvictionWindow, secondLossWindow, zoneScenario } from "./define.js";
import {
  firstLossRequests,
  noEvictionWatchMs,
  partialWindow,
  RETURN_ZONE,
  SECOND_LOSS_AFTER_MS,
  smallPlan,
} from "./shared.js";

/** Of the first loss, these many come back: the zone Normal again (two lost, not more than two). */
function returning(firstLoss: number, judged: number): number {
  return Math.max(0, firstLoss + judged - 2);
}

export const zoneReturnsPartWay = zoneScenario({
  id: "zone-disruption/zone-returns-part-way",
  title:
    "a small zone partially disrupted returns part-way: Normal again, the node still lost is tainted and evicted",
  plan: smallPlan,
  note: (inputs, plan) =>
    `zone of ${plan.size}: ${plan.firstLoss} lost, then ${plan.judged}; ${returning(plan.firstLoss, plan.judged)} of the first come back`,
  expected: (inputs) => {
    const { profile } = inputs;
    const unknown = unknownAfterStopMs(profile);
    const plan = smallPlan(profile);
    const watchMs = noEvictionWatchMs(inputs);
    const periodMs = profile.nodeMonitorPeriodSeconds * 1000;
    const gapMs = taintGapMs(profile.nodeEvictionRate);
    const windows: ExpectedMilestone[] = [
      partialWindow(
        inputs,
        RETURN_ZONE,
        `${plan.firstLoss} of ${plan.size} not Ready`,
        firstLossRequests(plan.firstLoss),
      ),
      secondLossWindow(inputs, RETURN_ZONE),
      inputs.within({ name: "judged-unknown-1", after: "second-loss", ...unknown, why: "seen Unknown" }),
      inputs.within({
        name: "part-return",
        after: "judged-unknown-1",
        minMs: watchMs,
        maxMs: watchMs + SECOND_LOSS_AFTER_MS,
        why: "after watching it stay untainted (rate 0) as long as the normal rate would have evicted its pod",
      }),
      inputs.within({
        name: `zone-state:${RETURN_ZONE}:Normal`,
        after: "part-return",
        minMs: 0,
        maxMs: leaseRenewIntervalMs(profile) + periodMs + 3_000,
        why: "the returned nodes Ready (kwok restarts, renews), seen at the next monitor pass: 2 not Ready is Normal",
      }),
      inputs.within({
        name: "judged-taint-1",
        after: `zone-state:${RETURN_ZONE}:Normal`,
        minMs: 0,
        // Upstream's swap drains the new limiter, so the first taint comes one gap after Normal and
        // the second one gap later; but a monitor pass that reads the tipping node just before its
        // taint reaches the informer puts it back in the queue, and its second, no-op turn burns a
        // token (measured at 1000 workers: the judged node tainted 30.2 s after Normal at 0.1/s).
        maxMs: 3 * gapMs + 1000,
        why: `the rate swapped back to --node-eviction-rate ${profile.nodeEvictionRate}/s: the queue (the tipping node, the judged one) tainted one per ${gapMs / 1000}s after the swap, a turn more if the tipping node is queued again just as it is tainted`,
      }),
      judgedEvictionWindow(inputs, 1),
    ];
    return windows;
  },
  marks: ["second-loss", "part-return"],
  async run(context, plan) {
    const { inputs, steps } = context;
    const zone = await firstWorkers(context, plan.size);
    const first = zone.slice(0, plan.firstLoss);
    const judged = zone.slice(plan.firstLoss, plan.firstLoss + plan.judged);
    const back = first.slice(0, returning(plan.firstLoss, plan.judged));
    const stay = [...first.slice(back.length), ...judged];
    const all = [...first, ...judged];
    await deployWebOn(context, judged);
    await carveZone(context, RETURN_ZONE, zone);
    steps.registerUndo(`wait until ${nameList(all)} are back`, async () => {
      for (const node of all) await context.waitNodeBack(node);
    });
    // Two handles: the nodes that come back part-way, and those that stay lost.
    const returner = await context.faults.begin({
      action: { kind: "stop" },
      nodesHint: back,
      onFirstEffect: () => {
        context.faultStarts(all);
      },
    });
    const loser = await context.faults.begin({ action: { kind: "stop" }, nodesHint: stay });
    await steps.step(`stop ${nameList(first)} at once`, async () => {
      await returner.apply(back, { concurrent: true });
      await loser.apply(first.slice(back.length), { concurrent: true });
    });
    await partialReached(context, RETURN_ZONE)();
    context.mark("second-loss");
    await steps.step(`stop the judged ${nameList(judged)}`, () => loser.apply(judged, { concurrent: true }));
    await context.awaitMilestone("judged-unknown-1");
    const watchMs = noEvictionWatchMs(inputs);
    await steps.step(`watch ${watchMs / 1000}s: no taint at rate 0`, () => sleep(watchMs, context.signal));
    await steps.step(`start ${nameList(back)} again`, async () => {
      await returner.revert({
        onReverted: () => {
          context.mark("part-return");
        },
      });
      for (const node of back) await context.waitNodeBack(node);
    });
    await context.awaitMilestone("judged-eviction-1");
  },
});
