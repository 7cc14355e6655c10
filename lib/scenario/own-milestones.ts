// The milestones a scenario makes itself (ownMilestones): marking or deriving any other is refused,
// so the declared list and the recorder's vocabulary are every name its windows may use.
import { RekindleError } from "../errors.js";
import type { ScenarioDefinition } from "./harness-types.js";

/** Whether the scenario declared `name` among the milestones it makes itself. */
export function isOwnMilestone(definition: ScenarioDefinition, name: string): boolean {
  return (definition.ownMilestones ?? []).some((own) =>
    typeof own === "string" ? own === name : own.test(name),
  );
}

export function undeclaredMilestone(definition: ScenarioDefinition, name: string): RekindleError {
  return new RekindleError(
    "SCENARIO_DEFINITION",
    `${definition.id} makes milestone "${name}" it does not declare`,
    {
      hint: "add it to the scenario's ownMilestones",
    },
  );
}
