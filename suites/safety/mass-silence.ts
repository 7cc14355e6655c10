// Safety against a mass power-off: nodes of a zone that go silent in one event (a switch failure
// cuts their kubelets off the API server while their workloads keep serving) are held until
// node-monitor-grace-period, then fenced at the secondary rate (lib/controller/fleet.ts). One
// scenario heals the cut before the grace period: nothing is powered off. The other loses the same
// nodes for good: all are fenced, one per secondary-rate interval, and their StatefulSets recover.
//
// The sim runs 3 workers in 2 zones, and built-in scenarios cannot ask for more. So both put the
// three workers in one zone (labels restored afterwards) and cut two of them: the smallest "several
// nodes of a zone". maxUnhealthy is raised to 2 so the guard's budget (40 % of 3 allows 1) does not
// hold them first: the hold under test is the only thing between them and a power-off. The nodes lost
// for good are stopped, so the controller's early power read would find them off and fence them
// without any hold (lib/controller/early-power.ts): that scenario turns it off, as for a driver
// that cannot read power, and a third one, with it on, shows two nodes read off fenced at once.
import { leaseRenewIntervalMs } from "../../lib/cluster/profiles.js";
import { EVENT_REASONS } from "../../lib/controller/events.js";
import type { Milestone } from "../../lib/observe/milestones.js";
import type { Transition } from "../../lib/observe/types.js";
import type { ControllerConfig } from "../../lib/controller/config.js";
import {
  deployWebAndDb,
  detectionWindow,
  injectFault,
  never,
  nodeLossWorkloads,
  registerWaitBack,
} from "../../lib/scenario/common.js";
import type { DeriveContext, ExpectationInputs, ScenarioContext } from "../../lib/scenario/harness.js";
import { occupyEveryWorker, powerBackOn, startSafetyController } from "../../lib/scenario/safety.js";
import { sleep } from "../../lib/util/time.js";
import { safetyScenario } from "./define.js";
import {
  everyFaultNodeHad,
  healThenWatch,
  leaseRenewTime,
  PARTITION_HEALED,
  relabelZones,
  renewedSince,
} from "./shared.js";

/** Every cut node has had its FenceHeldCorrelatedSilence Event. */
const HELD_ALL = "correlated-silence-held-all";
/** The n-th FenceStarted Event after the fault, any node. */
const fenceStarted = (n: number) => `fence-started:${n}`;

/** The budget that lets both cut nodes through the guard (see the header). */
const CONTROLLER = { maxUnhealthy: "2" } as const;

/** How long the healed scenario's cut lasts: half the grace period (25 s at upstream's 50 s), and judged lost before it heals. */
export function cutMs(inputs: ExpectationInputs): number {
  const c = inputs.controller;
  return Math.max(c.nodeMonitorGracePeriodMs / 2, c.unhealthyAfterMs + 3 * c.checkIntervalMs);
}

/** Between two starts at the secondary rate (one bucket token). */
function secondaryIntervalMs(inputs: ExpectationInputs): number {
  return 60_000 / inputs.controller.secondaryFenceRatePerMinute;
}

/** Puts every worker in one zone, the first one found among them (labels restored by an undo). */
async function oneZone(context: ScenarioContext, workers: readonly string[]): Promise<string> {
  let zone = "zone-a";
  await relabelZones(context, workers, `put ${workers.join(", ")} in one zone`, (_, originals) => {
    zone = [...originals.values()].find((z) => z !== undefined) ?? "zone-a";
    return zone;
  });
  return zone;
}

/** Waits until `node` renews its Lease: a cut right after it gives it the longest silence before it counts. */
async function afterRenewal(context: ScenarioContext, node: string): Promise<void> {
  await renewedSince(context, node, await leaseRenewTime(context, node));
}

/** HELD_ALL and the FenceStarted Events after the fault, numbered. */
function deriveHoldsAndStarts(transitions: readonly Transition[], context: DeriveContext): Milestone[] {
  const out = everyFaultNodeHad(transitions, context, EVENT_REASONS.correlatedSilenceHeld, HELD_ALL);
  let starts = 0;
  for (const t of transitions) {
    if (t.atMs < context.faultAtMs || t.name !== "event" || t.detail?.["reason"] !== "FenceStarted") continue;
    out.push({
      name: fenceStarted(++starts),
      atMs: t.atMs - context.faultAtMs,
      ...(t.node ? { node: t.node } : {}),
    });
  }
  return out;
}

/** Both cut nodes held, once each is judged lost (its last renewal up to one interval before the cut). */
function heldWindow(inputs: ExpectationInputs) {
  const c = inputs.controller;
  return inputs.within({
    name: HELD_ALL,
    after: "fault-injected",
    minMs: Math.max(0, c.unhealthyAfterMs - leaseRenewIntervalMs(inputs.profile) - c.checkIntervalMs),
    maxMs: c.unhealthyAfterMs + 4 * c.checkIntervalMs,
    why: "silent past unhealthyAfter together: held as one event (FenceHeldCorrelatedSilence), not fenced",
  });
}

/** The milestones the scenarios here mark or derive. */
const MARKS = [HELD_ALL, /^fence-started:\d+$/];

export const zoneNodesSilentTogetherHealed = safetyScenario({
  id: "safety/zone-nodes-silent-together-healed",
  title:
    "two nodes of a zone cut off the API server together for half node-monitor-grace-period, their pods still running: held as one event, nothing powered off",
  requires: ["partition", "fencing"],
  powerOffs: 0,
  noFence: "nodes silent together are held for node-monitor-grace-period, and this cut heals before it",
  windows: (inputs) => [heldWindow(inputs)],
  marks: [...MARKS, PARTITION_HEALED],
  derive: deriveHoldsAndStarts,
  note: (inputs) =>
    `3 workers in one zone, 2 cut for ${cutMs(inputs) / 1000}s (node-monitor-grace-period ${inputs.controller.nodeMonitorGracePeriodMs / 1000}s); maxUnhealthy ${CONTROLLER.maxUnhealthy}`,
  async run(context) {
    const { steps, inputs } = context;
    const workers = await occupyEveryWorker(context);
    const pair = workers.slice(0, 2);
    await oneZone(context, workers);
    await startSafetyController(context, { count: 0 }, { config: CONTROLLER });
    await steps.step(`wait for ${pair[0] ?? ""} to renew`, () => afterRenewal(context, pair[0] ?? ""));
    const cut = await injectFault(context, `cut ${pair.join(", ")} off the API server`, {
      action: { kind: "partition" },
      nodes: pair,
      durationMs: 4 * cutMs(inputs) + 60_000,
      concurrent: true,
    });
    await steps.step(`keep them cut off ${cutMs(inputs) / 1000}s`, () =>
      sleep(cutMs(inputs), context.signal),
    );
    await healThenWatch(context, cut, pair, "nothing may be powered off");
  },
});

/**
 * The StatefulSet's node and another worker, all workers in one zone, the counted controller
 * started with `config`; then the pair is stopped at once. Returns the pair.
 */
async function stopPairTogether(
  context: ScenarioContext<"lifecycle" | "fencing">,
  config: Partial<ControllerConfig>,
): Promise<string[]> {
  const { statefulSetNode } = await deployWebAndDb(context);
  const workers = await occupyEveryWorker(context);
  const pair = [statefulSetNode, workers.find((w) => w !== statefulSetNode) ?? ""];
  await oneZone(context, workers);
  await startSafetyController(context, { count: 0 }, { config });
  for (const node of pair) registerWaitBack(context, node);
  await injectFault(context, `stop ${pair.join(", ")} together`, {
    action: { kind: "stop" },
    nodes: pair,
    concurrent: true,
  });
  return pair;
}

/** Both StatefulSets back, then the pair powered on. */
async function recoveredThenBack(
  context: ScenarioContext<"lifecycle">,
  pair: readonly string[],
): Promise<void> {
  await context.awaitMilestone("statefulset:recovered");
  await context.awaitMilestone("statefulset-plain:recovered");
  for (const node of pair) await powerBackOn(context, node);
}

export const zoneNodesLostTogether = safetyScenario({
  id: "safety/zone-nodes-lost-together",
  title:
    "two nodes of a zone lost together for good, their power unreadable: held for node-monitor-grace-period, then fenced one per secondary-rate interval, and their StatefulSets recover",
  requires: ["lifecycle", "fencing"],
  powerOffs: 2,
  windows: (inputs) => {
    const c = inputs.controller;
    const renewMs = leaseRenewIntervalMs(inputs.profile);
    const firstMinMs = c.nodeMonitorGracePeriodMs - renewMs - c.checkIntervalMs;
    const lastMaxMs = c.nodeMonitorGracePeriodMs + secondaryIntervalMs(inputs) + 4 * c.checkIntervalMs;
    return [
      heldWindow(inputs),
      inputs.within({
        name: fenceStarted(1),
        after: "fault-injected",
        minMs: firstMinMs,
        maxMs: c.nodeMonitorGracePeriodMs + 4 * c.checkIntervalMs,
        why: "held until node-monitor-grace-period has passed since the later of the two went silent",
      }),
      inputs.within({
        name: fenceStarted(2),
        after: fenceStarted(1),
        minMs: secondaryIntervalMs(inputs) - c.checkIntervalMs,
        maxMs: secondaryIntervalMs(inputs) + 4 * c.checkIntervalMs,
        why: `the secondary fence rate: ${c.secondaryFenceRatePerMinute} start per minute`,
      }),
      never(fenceStarted(3), "one fence per lost node"),
      ...["statefulset", "statefulset-plain"].map((id) =>
        inputs.within({
          name: `${id}:recovered`,
          after: "fault-injected",
          minMs: firstMinMs,
          maxMs: lastMaxMs + c.detachGraceMs + 30_000,
          why: "released by its node's fence, first or second at the secondary rate",
        }),
      ),
    ];
  },
  workloads: nodeLossWorkloads,
  recoveryOf: ["statefulset", "statefulset-plain"],
  marks: MARKS,
  derive: deriveHoldsAndStarts,
  note: (inputs) =>
    `3 workers in one zone, 2 lost; node-monitor-grace-period ${inputs.controller.nodeMonitorGracePeriodMs / 1000}s, then ${inputs.controller.secondaryFenceRatePerMinute} fence/min; maxUnhealthy ${CONTROLLER.maxUnhealthy}`,
  async run(context) {
    // A driver that cannot read power (early reads off): silence is all the controller has.
    const pair = await stopPairTogether(context, { ...CONTROLLER, earlyPowerRead: false });
    await context.awaitMilestone(HELD_ALL);
    await context.awaitMilestone(fenceStarted(2));
    await recoveredThenBack(context, pair);
  },
});

export const zoneNodesPoweredOffTogether = safetyScenario({
  id: "safety/zone-nodes-powered-off-together",
  title:
    "two nodes of a zone powered off together, their driver reads them off: no hold, each fenced at its first missed renewal, their StatefulSets recover",
  requires: ["lifecycle", "fencing"],
  powerOffs: 2,
  never: {
    [HELD_ALL]: "nodes read off are no network event: the correlated-silence hold is for silence alone",
  },
  windows: (inputs) => {
    const c = inputs.controller;
    const detect = detectionWindow(inputs, { poweredOff: true });
    return [
      ...[1, 2].map((n) =>
        inputs.within({
          name: fenceStarted(n),
          after: "fault-injected",
          ...detect,
          why: "each is read off at its first missed renewal and fenced then, without the hold or the secondary rate",
        }),
      ),
      never(fenceStarted(3), "one fence per lost node"),
      ...["statefulset", "statefulset-plain"].map((id) =>
        inputs.within({
          name: `${id}:recovered`,
          after: "fault-injected",
          minMs: detect.minMs,
          maxMs: detect.maxMs + c.detachGraceMs + 30_000,
          why: "released by its node's fence",
        }),
      ),
    ];
  },
  workloads: nodeLossWorkloads,
  recoveryOf: ["statefulset", "statefulset-plain"],
  marks: MARKS,
  derive: deriveHoldsAndStarts,
  note: (inputs) =>
    `3 workers in one zone, 2 powered off; node-monitor-grace-period ${inputs.controller.nodeMonitorGracePeriodMs / 1000}s is not waited for; maxUnhealthy ${CONTROLLER.maxUnhealthy}`,
  async run(context) {
    const pair = await stopPairTogether(context, CONTROLLER);
    await context.awaitMilestone(fenceStarted(2));
    await recoveredThenBack(context, pair);
  },
});
