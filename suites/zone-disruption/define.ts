// The zone-disruption skeleton, written once: every scenario of the family carves a zone of
// workers out of the cluster as its plan sizes it (and needs a worker beyond it), derives the
// judged nodes' milestones, follows the web Deployment without a headline recovery, and needs
// kube-controller-manager's log for the zone states. A scenario states its
// plan, windows, marks and steps; its two window shapes that recur are here too.
import type { TimingProfile } from "../../lib/cluster/profiles.js";
import type { ExpectedMilestone } from "../../lib/expect/windows.js";
import type { ZonePlan } from "../../lib/expect/zone-disruption.js";
import {
  defineScenario,
  type ExpectationInputs,
  type ScenarioContext,
  type ScenarioDefinition,
} from "../../lib/scenario/harness.js";
import { JUDGED_MILESTONES, judgedMilestones, zoneWorkloads } from "../../lib/scenario/zone-carve.js";
import { SECOND_LOSS_AFTER_MS } from "./shared.js";

type ZoneCapability = "lifecycle" | "controller-manager-flags";

export interface ZoneScenario {
  id: string;
  title: string;
  /** The zone it carves and loses, at a profile (smallPlan, largePlan, lastZonePlan). */
  plan: (profile: TimingProfile) => ZonePlan;
  note: (inputs: ExpectationInputs, plan: ZonePlan) => string;
  expected: (inputs: ExpectationInputs) => ExpectedMilestone[];
  watchMs?: (inputs: ExpectationInputs) => number;
  /** The milestones it marks or derives itself, beside the judged nodes' ones. */
  marks: readonly string[];
  /** Milestones it derives itself, after the judged nodes' ones. */
  derive?: ScenarioDefinition["derive"];
  run(context: ScenarioContext<ZoneCapability>, plan: ZonePlan): Promise<void>;
}

/** A zone-disruption scenario from what is its own (see ZoneScenario). */
export function zoneScenario(spec: ZoneScenario): ScenarioDefinition<ZoneCapability> {
  const { plan, derive } = spec;
  return defineScenario({
    id: spec.id,
    title: spec.title,
    requires: ["lifecycle", "controller-manager-flags"],
    minWorkers: (profile) => plan(profile).size + 1,
    note: (inputs) => spec.note(inputs, plan(inputs.profile)),
    expected: spec.expected,
    ...(spec.watchMs ? { watchMs: spec.watchMs } : {}),
    workloads: zoneWorkloads,
    recoveryOf: [],
    ownMilestones: [...spec.marks, ...JUDGED_MILESTONES],
    derive: (transitions, context) => [
      ...judgedMilestones(transitions, context, plan(context.inputs.profile).judged),
      ...(derive?.(transitions, context) ?? []),
    ],
    run: (context) => spec.run(context, plan(context.inputs.profile)),
  });
}

/** "second-loss": the judged nodes stopped once the zone's PartialDisruption is in the log. */
export function secondLossWindow(
  inputs: ExpectationInputs,
  zone: string,
  why = "the judged node is stopped once the state is in the log",
): ExpectedMilestone {
  return inputs.within({
    name: "second-loss",
    after: `zone-state:${zone}:PartialDisruption`,
    minMs: 0,
    maxMs: SECOND_LOSS_AFTER_MS,
    why,
  });
}

/** The i-th judged node's pod evicted, the default unreachable toleration after its taint. */
export function judgedEvictionWindow(inputs: ExpectationInputs, i: number): ExpectedMilestone {
  const toleranceMs = inputs.profile.defaultUnreachableTolerationSeconds * 1000;
  return inputs.within({
    name: `judged-eviction-${i}`,
    after: `judged-taint-${i}`,
    minMs: toleranceMs,
    maxMs: toleranceMs + 1000,
    why: `default unreachable toleration ${toleranceMs} ms`,
  });
}
