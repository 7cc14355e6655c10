// Every zone fully disrupted: master disruption mode.
import type { TimingProfile } from "../../lib/cluster/profiles.js";
import { RekindleError } from "../../lib/errors.js";
import {
  clientBacklogMs,
  controllerRequestRate,
  taintGapMs,
  taintLiftMs,
  NODE_UPDATE_ROUND_TRIP_MS,
  unknownAfterStopMs,
} from "../../lib/expect/zone-disruption.js";
import { never, type ExpectedMilestone } from "../../lib/expect/windows.js";
import { k8s } from "../../lib/kube/client.js";
import { podCountOn, ZONE_LABEL } from "../../lib/kube/queries.js";
import type { ExpectationInputs } from "../../lib/scenario/harness.js";
import {
  awaitUnreachableTaints,
  carveZone,
  carveZones,
  deployWebOn,
  firstWorkers,
  loseInSteps,
  partialReached,
  sortedWorkers,
  taintsLifted,
} from "../../lib/scenario/zone-carve.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import { zoneScenario } from "./define.js";
import { otherZoneSize, otherZones } from "./other-zones.js";
import {
  firstLossRequests,
  LAST_ZONE,
  SIM_MAX_LIFTED,
  lastZonePlan,
  noEvictionWatchMs,
  partialWindow,
  SECOND_LOSS_AFTER_MS,
} from "./shared.js";

/** What the windows depend on in the cluster the scenario finds. */
interface EveryZoneCounts {
  /** NoExecute taints the entering pass lifts: the other zones' nodes. */
  lifted: number;
  /** kube-controller-manager's requests for the first loss (firstLossRequests). */
  requests: number;
  /** Nodes of the largest other zone, whose taints at the normal rate the scenario waits for. */
  largestOtherZone: number;
}

/** The most past the largest other zone's taint gaps the scenario waits for the other zones' taints. */
const OTHER_TAINTS_MARGIN_MS = 30_000;

/** What `rekindle list` assumes: a scenario-sized sim cluster; a run refines it with the real counts. */
function catalogueCounts(profile: TimingProfile): EveryZoneCounts {
  return {
    lifted: SIM_MAX_LIFTED,
    requests: firstLossRequests(SIM_MAX_LIFTED),
    largestOtherZone: Math.min(otherZoneSize(profile), SIM_MAX_LIFTED),
  };
}

/**
 * How long after the last zone's PartialDisruption the other zones may still be short of
 * FullDisruption: a zone's state follows the monitor pass that marks its last node Unknown, and in
 * a mass loss kube-controller-manager's request backlog spreads those marks over passes (seen: 26 s
 * at 1000 workers with two such clusters on 2 cores, the API server answering slower than alone).
 * Their tainting at the normal rate starts only then.
 */
function othersFullMs(profile: TimingProfile, requests: number): number {
  return clientBacklogMs(profile, requests) + profile.nodeMonitorPeriodSeconds * 1000;
}

function everyZoneWindows(inputs: ExpectationInputs, counts: EveryZoneCounts): ExpectedMilestone[] {
  const { profile } = inputs;
  const plan = lastZonePlan(profile);
  const unknown = unknownAfterStopMs(profile);
  const rate = controllerRequestRate(profile);
  const liftMs = 1000 + taintLiftMs(profile, counts.lifted);
  const periodMs = profile.nodeMonitorPeriodSeconds * 1000;
  const windows: ExpectedMilestone[] = [
    partialWindow(
      inputs,
      LAST_ZONE,
      `${plan.firstLoss} of ${plan.size} not Ready: > 2 and ≥ --unhealthy-zone-threshold ${profile.unhealthyZoneThreshold}`,
      counts.requests,
    ),
    inputs.within({
      name: "second-loss",
      after: `zone-state:${LAST_ZONE}:PartialDisruption`,
      minMs: 0,
      maxMs:
        othersFullMs(profile, counts.requests) +
        counts.largestOtherZone * taintGapMs(profile.nodeEvictionRate) +
        OTHER_TAINTS_MARGIN_MS +
        2 * periodMs +
        SECOND_LOSS_AFTER_MS,
      why: `once the other zones are FullDisruption (up to kube-controller-manager's request backlog and a monitor pass later) and their nodes tainted (the largest zone, ${counts.largestOtherZone} nodes, at --node-eviction-rate ${profile.nodeEvictionRate}/s), then two monitor passes`,
    }),
  ];
  for (let i = 1; i <= plan.judged; i++)
    windows.push(
      inputs.within({
        name: `judged-unknown-${i}`,
        after: "second-loss",
        ...unknown,
        why: "seen Unknown like any lost node",
      }),
    );
  return [
    ...windows,
    inputs.within({
      name: "disruption-mode:entered",
      after: `judged-unknown-${plan.judged}`,
      minMs: 0,
      maxMs: profile.nodeMonitorPeriodSeconds * 1000,
      why: "the last Ready node gone: every zone FullDisruption (master disruption mode), at the same monitor pass",
    }),
    inputs.within({
      name: "taints-lifted",
      after: "disruption-mode:entered",
      minMs: 0,
      maxMs: liftMs,
      why: `the entering pass lifts every NoExecute taint its node list shows, one node after another (two calls a node at ${rate} a second: kube-controller-manager's QPS, or the API server's pace; at least one ${NODE_UPDATE_ROUND_TRIP_MS} ms round trip a node)`,
    }),
    never(
      "judged-taint-1",
      `${LAST_ZONE} PartialDisruption (rate 0), then every zone FullDisruption (rate 0 everywhere)`,
    ),
    never(
      "deployment:pod-deletion-requested",
      "no NoExecute taint on the judged nodes: their pods are never evicted",
    ),
  ];
}

export const everyZoneFull = zoneScenario({
  id: "zone-disruption/every-zone-full",
  title: "every zone fully disrupted: the taints put are lifted, no node tainted and no pod evicted",
  plan: lastZonePlan,
  note: (inputs, plan) =>
    `every worker but ${plan.judged} of a zone of ${plan.size} lost (the zone PartialDisruption, the others FullDisruption and tainted at the normal rate), then those ${plan.judged}`,
  expected: (inputs) => everyZoneWindows(inputs, catalogueCounts(inputs.profile)),
  watchMs: noEvictionWatchMs,
  marks: ["second-loss", "taints-lifted"],
  derive: (transitions, context) =>
    taintsLifted(
      transitions,
      context,
      context.faultNodes.slice(0, -lastZonePlan(context.inputs.profile).judged),
    ),
  async run(context, plan) {
    const { inputs, steps } = context;
    const workers = await sortedWorkers(context);
    const nodes = await context.kc.makeApiClient(k8s.CoreV1Api).listNode();
    const others = nodes.items.map((n) => n.metadata?.name ?? "").filter((n) => !workers.includes(n));
    if (others.length > 0)
      throw new RekindleError(
        "UNSUPPORTED",
        `nodes other than the workers stay Ready (${others.join(", ")}): no full disruption of every zone`,
        { hint: "run it on the sim, whose control plane is no node" },
      );
    const zone = await firstWorkers(context, plan.size);
    const judged = zone.slice(plan.firstLoss);
    const first = workers.filter((w) => !judged.includes(w));
    const elsewhere = first.filter((w) => !zone.includes(w));
    await deployWebOn(context, judged);
    await carveZone(context, LAST_ZONE, zone);
    const labels = new Map(
      nodes.items.map((n) => [n.metadata?.name ?? "", n.metadata?.labels?.[ZONE_LABEL]]),
    );
    const other = otherZones(elsewhere, labels, otherZoneSize(inputs.profile));
    if (other.split) await carveZones(context, other.zones);
    const largestOtherZone = Math.max(0, ...[...other.zones.values()].map((g) => g.length));
    const pods = await podCountOn(context.kc, first);
    const requests = firstLossRequests(first.length, 0) + pods;
    context.expectTimeline(
      everyZoneWindows(inputs, {
        lifted: Math.max(SIM_MAX_LIFTED, elsewhere.length),
        requests,
        largestOtherZone,
      }),
    );
    const periodMs = inputs.profile.nodeMonitorPeriodSeconds * 1000;
    // The other zones FullDisruption while this one is not: tainted at the normal rate. Their taints
    // must be in the controller's node list when every zone goes (it lifts what that list shows).
    await loseInSteps(context, [
      { nodes: first },
      {
        nodes: judged,
        mark: "second-loss",
        before: async () => {
          await partialReached(context, LAST_ZONE)();
          await steps.step(`the ${elsewhere.length} nodes of the other zones tainted`, async () => {
            const zones = [...other.zones.keys()];
            await pollUntil(
              () => {
                const full = new Set(context.milestones().map((m) => m.name));
                const all = zones.every((z) => full.has(`zone-state:${z}:FullDisruption`));
                return Promise.resolve(all ? true : undefined);
              },
              {
                what: `FullDisruption in every other zone (${zones.length})`,
                timeoutMs: othersFullMs(inputs.profile, requests) + OTHER_TAINTS_MARGIN_MS,
                intervalMs: 1_000,
                ...(context.signal ? { signal: context.signal } : {}),
              },
            );
            // Each zone taints its own nodes, side by side: the largest one sets the wait.
            await awaitUnreachableTaints(
              context,
              elsewhere,
              largestOtherZone * taintGapMs(inputs.profile.nodeEvictionRate) + OTHER_TAINTS_MARGIN_MS,
            );
            await sleep(2 * periodMs, context.signal);
          });
        },
      },
    ]);
    await context.awaitMilestone("disruption-mode:entered");
    await context.awaitMilestone("taints-lifted");
    const watchMs = noEvictionWatchMs(inputs);
    await steps.step(`watch ${watchMs / 1000}s: at the normal rate pods would be evicted by then`, () =>
      sleep(watchMs, context.signal),
    );
  },
});
