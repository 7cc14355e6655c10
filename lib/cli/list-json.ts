// `rekindle list -o json`: the scenarios and their expected windows as data, for scripts and docs.
import { nominalWindows } from "../expect/model.js";
import type { ExpectationInputs } from "../scenario/harness.js";
import { SCENARIOS, type SuiteFamily } from "../../suites/index.js";

export interface ListedMilestone {
  name: string;
  /** The milestone its window is measured from ("fault-injected" for the fault). */
  after: string;
  /** Window after `after`, in ms; maxMs null: must not happen. */
  minMs: number;
  maxMs: number | null;
  /** Chained from the fault, when every milestone before it has a window (absent otherwise). */
  fromFault?: { minMs: number; maxMs: number | null };
  why: string;
}

export interface ListedScenario {
  id: string;
  family: SuiteFamily;
  title: string;
  requires: readonly string[];
  note?: string;
  milestones: ListedMilestone[];
}

export interface ScenarioList {
  profile: string;
  scenarios: ListedScenario[];
}

export function scenarioListJson(
  profile: string,
  families: readonly SuiteFamily[],
  inputs: ExpectationInputs,
): ScenarioList {
  const scenarios = families.flatMap((family) =>
    SCENARIOS[family].map((scenario): ListedScenario => {
      const expected = scenario.expected(inputs);
      const nominal = new Map(nominalWindows(expected).map((w) => [w.name, w]));
      const note = scenario.note?.(inputs);
      return {
        id: scenario.id,
        family,
        title: scenario.title,
        requires: scenario.requires,
        ...(note !== undefined ? { note } : {}),
        milestones: expected.map((e) => {
          const chained = nominal.get(e.name);
          return {
            name: e.name,
            after: e.after,
            minMs: e.minMs,
            maxMs: e.maxMs,
            ...(chained ? { fromFault: { minMs: chained.minMs, maxMs: chained.maxMs } } : {}),
            why: e.why,
          };
        }),
      };
    }),
  );
  return { profile, scenarios };
}
