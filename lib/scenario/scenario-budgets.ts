// A scenario's budgets (ScenarioDefinition.budgets) checked against its judged run: the same
// milestones and the same transitions, up to the end of its own steps, that its windows are.
import type { BudgetResult } from "../expect/budgets.js";
import type { ExpectedMilestone } from "../expect/windows.js";
import type { Milestone } from "../observe/milestones.js";
import type { ScenarioDefinition } from "./harness-types.js";
import type { ScenarioTimeline } from "./scenario-timeline.js";

export interface CheckedBudgets {
  /** Absent when the scenario has no budgets, or the fault never happened (nothing to measure). */
  results?: BudgetResult[];
  /** What checking them threw (a budget naming a workload the scenario has not…). */
  failure?: unknown;
}

export function scenarioBudgets(
  definition: ScenarioDefinition,
  timeline: ScenarioTimeline,
  milestones: readonly Milestone[],
  observedUntilMs: number,
  expected: readonly ExpectedMilestone[],
): CheckedBudgets {
  if (definition.budgets === undefined || timeline.faultAtMs === 0) return {};
  try {
    return {
      results: definition.budgets({
        ...timeline.deriveContext(),
        milestones,
        transitions: timeline.transitionsUntil(observedUntilMs),
        expected,
      }),
    };
  } catch (error) {
    return { failure: error };
  }
}
