// A zone partially disrupted: small (rate 0) and large (the secondary rate).
import { taintGapMs, unknownAfterStopMs } from "../../lib/expect/zone-disruption.js";
import { never, type ExpectedMilestone } from "../../lib/expect/windows.js";
import {
  awaitUnreachableTaints,
  carveZone,
  deployWebOn,
  firstWorkers,
  loseInSteps,
  partialReached,
} from "../../lib/scenario/zone-carve.js";
import { sleep } from "../../lib/util/time.js";
import { judgedEvictionWindow, secondLossWindow, zoneScenario } from "./define.js";
import {
  LARGE_ZONE,
  SECOND_LOSS_AFTER_MS,
  SMALL_ZONE,
  largePlan,
  firstLossRequests,
  noEvictionWatchMs,
  partialWindow,
  smallPlan,
} from "./shared.js";

export const smallZonePartial = zoneScenario({
  id: "zone-disruption/small-zone-partial",
  title: "a small zone partially disrupted: its taint rate drops to zero, a node lost then is never tainted",
  plan: smallPlan,
  note: (inputs, plan) =>
    `zone of ${plan.size} workers (≤ --large-cluster-size-threshold ${inputs.profile.largeClusterSizeThreshold}): ${plan.firstLoss} lost, then ${plan.judged}`,
  expected: (inputs) => {
    const plan = smallPlan(inputs.profile);
    const unknown = unknownAfterStopMs(inputs.profile);
    return [
      partialWindow(
        inputs,
        SMALL_ZONE,
        `${plan.firstLoss} of ${plan.size} not Ready: > 2 and ≥ --unhealthy-zone-threshold ${inputs.profile.unhealthyZoneThreshold}`,
        firstLossRequests(plan.firstLoss),
      ),
      secondLossWindow(inputs, SMALL_ZONE),
      inputs.within({
        name: "judged-unknown-1",
        after: "second-loss",
        ...unknown,
        why: "the judged node is seen Unknown like any lost node",
      }),
      never(
        "judged-taint-1",
        `a PartialDisruption zone of ${plan.size} ≤ ${inputs.profile.largeClusterSizeThreshold} nodes taints at rate 0`,
      ),
      never("deployment:pod-deletion-requested", "no taint, so its pod on the judged node is never evicted"),
    ];
  },
  watchMs: noEvictionWatchMs,
  marks: ["second-loss"],
  async run(context, plan) {
    const { inputs, steps } = context;
    const zone = await firstWorkers(context, plan.size);
    const first = zone.slice(0, plan.firstLoss);
    const judged = zone.slice(plan.firstLoss, plan.firstLoss + plan.judged);
    await deployWebOn(context, judged);
    await carveZone(context, SMALL_ZONE, zone);
    await loseInSteps(context, [
      { nodes: first },
      { nodes: judged, mark: "second-loss", before: partialReached(context, SMALL_ZONE) },
    ]);
    await context.awaitMilestone("judged-unknown-1");
    const watchMs = noEvictionWatchMs(inputs);
    await steps.step(`watch ${watchMs / 1000}s: at the normal rate its pod would be evicted by then`, () =>
      sleep(watchMs, context.signal),
    );
  },
});

export const largeZonePartial = zoneScenario({
  id: "zone-disruption/large-zone-partial",
  title:
    "a large zone partially disrupted: one node tainted, and its pods evicted, per 1/secondary-rate seconds",
  plan: largePlan,
  note: (inputs, plan) =>
    `zone of ${plan.size} workers (> --large-cluster-size-threshold ${inputs.profile.largeClusterSizeThreshold}): ${plan.firstLoss - 1} lost (Normal), 1 more (PartialDisruption), then ${plan.judged} tainted ${taintGapMs(plan.partialRate) / 1000}s apart`,
  expected: (inputs) => {
    const { profile } = inputs;
    const plan = largePlan(profile);
    const gapMs = taintGapMs(plan.partialRate);
    const unknown = unknownAfterStopMs(profile);
    const normal = (plan.firstLoss - 1) * taintGapMs(profile.nodeEvictionRate);
    const rate = `--secondary-node-eviction-rate ${profile.secondaryNodeEvictionRate}/s: one taint per ${gapMs / 1000}s`;
    const windows: ExpectedMilestone[] = [
      inputs.within({
        name: "tipping-loss",
        after: "fault-injected",
        minMs: unknown.minMs,
        maxMs: unknown.maxMs + normal + SECOND_LOSS_AFTER_MS,
        why: `once the first ${plan.firstLoss - 1} (the zone still Normal) are tainted at --node-eviction-rate ${profile.nodeEvictionRate}/s`,
      }),
      inputs.within({
        name: `zone-state:${LARGE_ZONE}:PartialDisruption`,
        after: "tipping-loss",
        ...unknown,
        why: `${plan.firstLoss} of ${plan.size} not Ready: > 2 and ≥ --unhealthy-zone-threshold ${profile.unhealthyZoneThreshold}`,
      }),
      secondLossWindow(inputs, LARGE_ZONE, "the judged nodes are stopped once the state is in the log"),
      inputs.within({
        name: "judged-unknown-1",
        after: "second-loss",
        ...unknown,
        why: "seen Unknown like any lost node",
      }),
      inputs.within({
        name: "judged-taint-1",
        after: "judged-unknown-1",
        minMs: 0,
        maxMs: gapMs,
        why: `behind the tipping node, tainted at the swap: ${rate}`,
      }),
    ];
    for (let i = 2; i <= plan.judged; i++)
      windows.push(
        inputs.within({
          name: `judged-taint-${i}`,
          after: `judged-taint-${i - 1}`,
          minMs: gapMs,
          maxMs: gapMs + 1000,
          why: rate,
        }),
      );
    for (let i = 1; i <= plan.judged; i++) windows.push(judgedEvictionWindow(inputs, i));
    return windows;
  },
  marks: ["tipping-loss", "second-loss"],
  async run(context, plan) {
    const { inputs, steps } = context;
    const zone = await firstWorkers(context, plan.size);
    const normal = zone.slice(0, plan.firstLoss - 1);
    const tipping = zone.slice(plan.firstLoss - 1, plan.firstLoss);
    const judged = zone.slice(plan.firstLoss, plan.firstLoss + plan.judged);
    const normalGapMs = taintGapMs(inputs.profile.nodeEvictionRate);
    await deployWebOn(context, judged);
    await carveZone(context, LARGE_ZONE, zone);
    // Lost while the zone is Normal, they are tainted at the normal rate; lost all at once they
    // would all queue at the secondary rate (minutes at upstream's), before the judged nodes.
    await loseInSteps(context, [
      { nodes: normal },
      {
        nodes: tipping,
        mark: "tipping-loss",
        before: () =>
          steps.step(`the first ${normal.length} tainted at the normal rate`, () =>
            awaitUnreachableTaints(
              context,
              normal,
              unknownAfterStopMs(inputs.profile).maxMs + normal.length * normalGapMs + 30_000,
            ),
          ),
      },
      { nodes: judged, mark: "second-loss", before: partialReached(context, LARGE_ZONE) },
    ]);
    await context.awaitMilestone(`judged-eviction-${plan.judged}`);
  },
});
