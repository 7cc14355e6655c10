// The safety family's skeleton, written once: every safety scenario runs the controller, lists the
// safety invariants first (lib/scenario/safety.ts), derives the unsafe moments and ends by checking
// that the controller left nothing behind. A scenario states only what is its own: the power-offs
// its incidents allow, what else must never happen (a table, name → why), its bounded windows, the
// milestones it marks and its steps.
import type { NodeCapability } from "../../lib/cluster/provider.js";
import type { ExpectedMilestone } from "../../lib/expect/windows.js";
import type { Milestone, WorkloadRef } from "../../lib/observe/milestones.js";
import type { Transition } from "../../lib/observe/types.js";
import { never, noFence } from "../../lib/scenario/common.js";
import {
  defineScenario,
  type DeriveContext,
  type ExpectationInputs,
  type ScenarioContext,
  type ScenarioDefinition,
} from "../../lib/scenario/harness.js";
import {
  checkNothingLeftBehind,
  deriveUnsafe,
  fenceStartedTwice,
  SAFETY_MILESTONES,
  safetyExpectations,
} from "../../lib/scenario/safety.js";

/** Derived at the second FenceStarted Event after the fault (fenceStartedTwice): one incident, one fence. */
export const FENCE_STARTED_TWICE = "fence-started-twice";

export interface SafetyScenario<R extends NodeCapability> {
  id: string;
  title: string;
  /** The capabilities it uses (the harness adds `fencing` for the controller: scenarioNeeds). */
  requires: readonly R[];
  /** How many power-offs its incidents allow (safetyExpectations). */
  powerOffs: number;
  /** Why no fence may start at all, for a scenario where none may (noFence's two "never" windows). */
  noFence?: string;
  /**
   * What else must never happen, name → why, listed after the invariants. FENCE_STARTED_TWICE among
   * them is derived too, so a scenario that allows one fence only says so here.
   */
  never?: Readonly<Record<string, string>>;
  /** Its own windows, after the "never" ones (a "never" that belongs among them may stand here too). */
  windows?: (inputs: ExpectationInputs) => ExpectedMilestone[];
  /** Workloads whose milestones are derived. Default none. */
  workloads?: (namespace: string) => WorkloadRef[];
  /** Whose recovery is the headline number. Default none: a safety verdict is its windows. */
  recoveryOf?: string[] | "every workload";
  /** The milestones it marks or derives itself, beyond the safety ones (and FENCE_STARTED_TWICE). */
  marks?: readonly (string | RegExp)[];
  /** Milestones it derives itself, beside the unsafe ones. */
  derive?: (transitions: readonly Transition[], context: DeriveContext) => Milestone[];
  note?: (inputs: ExpectationInputs) => string;
  /** Its steps; the check that the controller left nothing behind follows them. */
  run(context: ScenarioContext<R>): Promise<void>;
}

/** The expected timeline: the invariants, what must never happen, then the scenario's windows. */
function safetyWindows(
  spec: Pick<SafetyScenario<NodeCapability>, "powerOffs" | "noFence" | "never" | "windows">,
  inputs: ExpectationInputs,
): ExpectedMilestone[] {
  return [
    ...safetyExpectations(spec.powerOffs),
    ...(spec.noFence !== undefined ? noFence(spec.noFence) : []),
    ...Object.entries(spec.never ?? {}).map(([name, why]) => never(name, why)),
    ...(spec.windows?.(inputs) ?? []),
  ];
}

/** A safety scenario from what is its own (see SafetyScenario). */
export function safetyScenario<const R extends NodeCapability = never>(
  spec: SafetyScenario<R>,
): ScenarioDefinition<R> {
  const once = spec.never !== undefined && FENCE_STARTED_TWICE in spec.never;
  const own = spec.derive;
  return defineScenario({
    id: spec.id,
    title: spec.title,
    requires: spec.requires,
    usesController: true,
    expected: (inputs) => safetyWindows(spec, inputs),
    workloads: spec.workloads ?? (() => []),
    ...(spec.recoveryOf !== "every workload" ? { recoveryOf: spec.recoveryOf ?? [] } : {}),
    ...(spec.note ? { note: spec.note } : {}),
    async run(context) {
      await spec.run(context);
      await checkNothingLeftBehind(context);
    },
    ownMilestones: [...SAFETY_MILESTONES, ...(spec.marks ?? []), ...(once ? [FENCE_STARTED_TWICE] : [])],
    derive: (transitions, context) => [
      ...deriveUnsafe(transitions, context),
      ...(once ? fenceStartedTwice(transitions, context.faultAtMs) : []),
      ...(own?.(transitions, context) ?? []),
    ],
  });
}
