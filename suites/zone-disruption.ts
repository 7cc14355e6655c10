// Zone disruption (reference 003): the node lifecycle controller computes a state per zone and
// swaps its taint rate. A zone PartialDisruption (more than 2 and at least unhealthyZoneThreshold
// of its nodes not Ready) taints nothing when it has largeClusterSizeThreshold nodes or fewer, and
// at the secondary rate when larger; every zone FullDisruption ("master disruption mode") taints
// nothing and lifts the taints it put. Each scenario carves its zone out of the workers (their zone
// label; lib/scenario/zone-carve.ts), loses the fewest nodes that put it in the state, then the
// judged nodes, whose pods the windows follow. Zone states come from kube-controller-manager's log
// (lib/observe/zone-states.ts), so the scenarios need it: the sim and kind have it.
import type { TimingProfile } from "../lib/cluster/profiles.js";
import { RekindleError } from "../lib/errors.js";
import {
  largeZonePlan,
  normalEvictionByMs,
  smallZonePlan,
  taintGapMs,
  unknownAfterStopMs,
  type ZonePlan,
} from "../lib/expect/zone-disruption.js";
import { never, type ExpectedMilestone } from "../lib/expect/windows.js";
import { k8s } from "../lib/kube/client.js";
import { defineScenario, type ExpectationInputs, type ScenarioContext } from "../lib/scenario/harness.js";
import {
  awaitUnreachableTaints,
  carveZone,
  deployWebOn,
  firstWorkers,
  JUDGED_MILESTONES,
  judgedMilestones,
  sortedWorkers,
  taintsLifted,
  zoneWorkloads,
} from "../lib/scenario/zone-carve.js";
import { sleep } from "../lib/util/time.js";

const SMALL_ZONE = "zd-small";
const LARGE_ZONE = "zd-large";
const LAST_ZONE = "zd-last";
/** The most NoExecute taints the entering pass lifts, for its window: every sim worker of a scenario-sized cluster. */
const SIM_MAX_LIFTED = 60;
/** The scenario stops its judged nodes once it reads the zone's state (kube-controller-manager's log, read each second). */
const SECOND_LOSS_AFTER_MS = 2_000;

function planOrThrow(plan: ZonePlan | undefined, what: string, profile: TimingProfile): ZonePlan {
  if (plan !== undefined) return plan;
  throw new RekindleError(
    "INVALID_INPUT",
    `profile ${profile.name}: no ${what} zone can be made of its zone knobs`,
    {
      hint: "unhealthyZoneThreshold below 1, largeClusterSizeThreshold of 5 or more",
    },
  );
}

const smallPlan = (profile: TimingProfile) => planOrThrow(smallZonePlan(profile), "small", profile);
const largePlan = (profile: TimingProfile) => planOrThrow(largeZonePlan(profile), "large", profile);

/** The window of the zone's state change: the last of the first loss's nodes seen Unknown. */
function partialWindow(inputs: ExpectationInputs, zone: string, why: string): ExpectedMilestone {
  const unknown = unknownAfterStopMs(inputs.profile);
  return inputs.within({
    name: `zone-state:${zone}:PartialDisruption`,
    after: "fault-injected",
    ...unknown,
    why,
  });
}

/** Stops the carved zone's first nodes, awaits its state, then stops the judged nodes (marked "second-loss"). */
async function loseInTwoSteps(
  context: ScenarioContext<"lifecycle" | "controller-manager-flags">,
  zone: string,
  first: readonly string[],
  judged: readonly string[],
  between?: () => Promise<void>,
): Promise<void> {
  const { steps } = context;
  const all = [...first, ...judged];
  steps.registerUndo(`wait until ${all.join(", ")} are back`, async () => {
    for (const node of all) await context.waitNodeBack(node);
  });
  const outage = await context.faults.begin({
    action: { kind: "stop" },
    nodesHint: all,
    onFirstEffect: () => {
      context.faultStarts(all);
    },
  });
  await steps.step(`stop ${first.join(", ")} at once`, () => outage.apply(first, { concurrent: true }));
  await steps.step(`zone ${zone} PartialDisruption`, () =>
    context.awaitMilestone(`zone-state:${zone}:PartialDisruption`),
  );
  if (between) await between();
  context.mark("second-loss");
  await steps.step(`stop the judged ${judged.join(", ")}`, () => outage.apply(judged, { concurrent: true }));
}

export const smallZonePartial = defineScenario({
  id: "zone-disruption/small-zone-partial",
  title: "a small zone partially disrupted: its taint rate drops to zero, a node lost then is never tainted",
  requires: ["lifecycle", "controller-manager-flags"],
  minWorkers: (profile) => smallPlan(profile).size + 1,
  note: (inputs) => {
    const plan = smallPlan(inputs.profile);
    return `zone of ${plan.size} workers (≤ --large-cluster-size-threshold ${inputs.profile.largeClusterSizeThreshold}): ${plan.firstLoss} lost, then ${plan.judged}`;
  },
  expected: (inputs) => {
    const plan = smallPlan(inputs.profile);
    const unknown = unknownAfterStopMs(inputs.profile);
    return [
      partialWindow(
        inputs,
        SMALL_ZONE,
        `${plan.firstLoss} of ${plan.size} not Ready: > 2 and ≥ --unhealthy-zone-threshold ${inputs.profile.unhealthyZoneThreshold}`,
      ),
      inputs.within({
        name: "second-loss",
        after: `zone-state:${SMALL_ZONE}:PartialDisruption`,
        minMs: 0,
        maxMs: SECOND_LOSS_AFTER_MS,
        why: "the judged node is stopped once the state is in the log",
      }),
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
  workloads: zoneWorkloads,
  recoveryOf: [],
  ownMilestones: ["second-loss", ...JUDGED_MILESTONES],
  derive: (transitions, context) =>
    judgedMilestones(transitions, context, smallPlan(context.inputs.profile).judged),
  async run(context) {
    const { inputs, steps } = context;
    const plan = smallPlan(inputs.profile);
    const zone = await firstWorkers(context, plan.size);
    const first = zone.slice(0, plan.firstLoss);
    const judged = zone.slice(plan.firstLoss, plan.firstLoss + plan.judged);
    await deployWebOn(context, judged);
    await carveZone(context, SMALL_ZONE, zone);
    await loseInTwoSteps(context, SMALL_ZONE, first, judged);
    await context.awaitMilestone("judged-unknown-1");
    const watchMs = normalEvictionByMs(inputs.profile) + inputs.slackMs;
    await steps.step(`watch ${watchMs / 1000}s: at the normal rate its pod would be evicted by then`, () =>
      sleep(watchMs, context.signal),
    );
  },
});

/** The zone lost last in the every-zone scenario: a small zone with two judged nodes, the last one making it FullDisruption. */
function lastZonePlan(profile: TimingProfile): ZonePlan {
  const plan = smallPlan(profile);
  return { ...plan, judged: plan.size - plan.firstLoss };
}

export const everyZoneFull = defineScenario({
  id: "zone-disruption/every-zone-full",
  title: "every zone fully disrupted: the taints put are lifted, no node tainted and no pod evicted",
  requires: ["lifecycle", "controller-manager-flags"],
  minWorkers: (profile) => lastZonePlan(profile).size + 1,
  note: (inputs) => {
    const plan = lastZonePlan(inputs.profile);
    return `every worker but ${plan.judged} of a zone of ${plan.size} lost (the zone PartialDisruption, the others FullDisruption and tainted at the normal rate), then those ${plan.judged}`;
  },
  expected: (inputs) => {
    const { profile } = inputs;
    const plan = lastZonePlan(profile);
    const unknown = unknownAfterStopMs(profile);
    const qps = profile.controllerManagerClient?.qps ?? 20;
    const liftMs = 1000 + Math.ceil(((2 * SIM_MAX_LIFTED) / qps) * 1000);
    const windows: ExpectedMilestone[] = [
      partialWindow(
        inputs,
        LAST_ZONE,
        `${plan.firstLoss} of ${plan.size} not Ready: > 2 and ≥ --unhealthy-zone-threshold ${profile.unhealthyZoneThreshold}`,
      ),
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
        why: `the entering pass lifts every NoExecute taint its node list shows (two calls a node at kube-controller-manager's ${qps} QPS)`,
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
  },
  workloads: zoneWorkloads,
  recoveryOf: [],
  ownMilestones: ["second-loss", "taints-lifted", ...JUDGED_MILESTONES],
  derive: (transitions, context) => {
    const judged = lastZonePlan(context.inputs.profile).judged;
    return [
      ...judgedMilestones(transitions, context, judged),
      ...taintsLifted(transitions, context, context.faultNodes.slice(0, -judged)),
    ];
  },
  async run(context) {
    const { inputs, steps } = context;
    const plan = lastZonePlan(inputs.profile);
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
    const periodMs = inputs.profile.nodeMonitorPeriodSeconds * 1000;
    // The other zones FullDisruption while this one is not: tainted at the normal rate. Their taints
    // must be in the controller's node list when every zone goes (it lifts what that list shows).
    await loseInTwoSteps(context, LAST_ZONE, first, judged, () =>
      steps.step(`the ${elsewhere.length} nodes of the other zones tainted`, async () => {
        await awaitUnreachableTaints(
          context,
          elsewhere,
          elsewhere.length * taintGapMs(inputs.profile.nodeEvictionRate) + 30_000,
        );
        await sleep(2 * periodMs, context.signal);
      }),
    );
    await context.awaitMilestone("disruption-mode:entered");
    await context.awaitMilestone("taints-lifted");
    const watchMs = normalEvictionByMs(inputs.profile) + inputs.slackMs;
    await steps.step(`watch ${watchMs / 1000}s: at the normal rate pods would be evicted by then`, () =>
      sleep(watchMs, context.signal),
    );
  },
});

export const largeZonePartial = defineScenario({
  id: "zone-disruption/large-zone-partial",
  title:
    "a large zone partially disrupted: one node tainted, and its pods evicted, per 1/secondary-rate seconds",
  requires: ["lifecycle", "controller-manager-flags"],
  minWorkers: (profile) => largePlan(profile).size + 1,
  note: (inputs) => {
    const plan = largePlan(inputs.profile);
    return `zone of ${plan.size} workers (> --large-cluster-size-threshold ${inputs.profile.largeClusterSizeThreshold}): ${plan.firstLoss} lost, then ${plan.judged} tainted ${taintGapMs(plan.partialRate) / 1000}s apart`;
  },
  expected: (inputs) => {
    const { profile } = inputs;
    const plan = largePlan(profile);
    const gapMs = taintGapMs(plan.partialRate);
    const unknown = unknownAfterStopMs(profile);
    const toleranceMs = profile.defaultUnreachableTolerationSeconds * 1000;
    const rate = `--secondary-node-eviction-rate ${profile.secondaryNodeEvictionRate}/s: one taint per ${gapMs / 1000}s`;
    const windows: ExpectedMilestone[] = [
      partialWindow(
        inputs,
        LARGE_ZONE,
        `${plan.firstLoss} of ${plan.size} not Ready: > 2 and ≥ --unhealthy-zone-threshold ${profile.unhealthyZoneThreshold}`,
      ),
      inputs.within({
        name: "second-loss",
        after: `zone-state:${LARGE_ZONE}:PartialDisruption`,
        minMs: 0,
        maxMs: plan.firstLoss * gapMs + SECOND_LOSS_AFTER_MS,
        why: `once the first loss's nodes are all tainted (${rate})`,
      }),
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
        why: `the bucket's one token, refilled at ${rate}`,
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
    for (let i = 1; i <= plan.judged; i++)
      windows.push(
        inputs.within({
          name: `judged-eviction-${i}`,
          after: `judged-taint-${i}`,
          minMs: toleranceMs,
          maxMs: toleranceMs + 1000,
          why: `default unreachable toleration ${toleranceMs} ms`,
        }),
      );
    return windows;
  },
  workloads: zoneWorkloads,
  recoveryOf: [],
  ownMilestones: ["second-loss", ...JUDGED_MILESTONES],
  derive: (transitions, context) =>
    judgedMilestones(transitions, context, largePlan(context.inputs.profile).judged),
  async run(context) {
    const { inputs } = context;
    const plan = largePlan(inputs.profile);
    const zone = await firstWorkers(context, plan.size);
    const first = zone.slice(0, plan.firstLoss);
    const judged = zone.slice(plan.firstLoss, plan.firstLoss + plan.judged);
    const gapMs = taintGapMs(plan.partialRate);
    await deployWebOn(context, judged);
    await carveZone(context, LARGE_ZONE, zone);
    // The judged nodes' taints are spaced by the bucket only if the first loss's are all put.
    await loseInTwoSteps(context, LARGE_ZONE, first, judged, () =>
      context.steps.step(`the first ${first.length} nodes tainted (${gapMs / 1000}s apart at most)`, () =>
        awaitUnreachableTaints(context, first, plan.firstLoss * gapMs + 30_000),
      ),
    );
    await context.awaitMilestone(`judged-eviction-${plan.judged}`);
  },
});

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [smallZonePartial, everyZoneFull, largeZonePartial];
