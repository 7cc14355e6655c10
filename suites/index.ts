// Every scenario `rekindle run` knows, by suite family: each family is one file of this folder,
// exporting its scenario definitions (`scenarios`). The runner builds the mocha tree from these;
// `rekindle list`, the benchmarks and the tests import the same modules.
import { RekindleError } from "../lib/errors.js";
import type { ScenarioDefinition } from "../lib/scenario/harness.js";
import * as controllerFailover from "./controller-failover.js";
import * as gracefulShutdown from "./graceful-shutdown.js";
import * as nodeLoss from "./node-loss.js";
import * as nodePressure from "./node-pressure.js";
import * as partition from "./partition.js";
import * as preflight from "./preflight.js";
import * as safety from "./safety/index.js";
import * as zoneDisruption from "./zone-disruption/index.js";
import * as zoneOutage from "./zone-outage.js";

export const SUITE_FAMILIES = [
  "preflight",
  "node-loss",
  "node-pressure",
  "partition",
  "zone-outage",
  "zone-disruption",
  "controller-failover",
  "graceful-shutdown",
  "safety",
] as const;
export type SuiteFamily = (typeof SUITE_FAMILIES)[number];

/** The families named (`--suite`), each checked; none named: every family. */
export function suiteFamilies(names: readonly string[] | undefined): SuiteFamily[] {
  if (names === undefined || names.length === 0) return [...SUITE_FAMILIES];
  return names.map((name) => {
    if (!(SUITE_FAMILIES as readonly string[]).includes(name))
      throw RekindleError.invalidInput("suite", name, SUITE_FAMILIES);
    return name as SuiteFamily;
  });
}

export const SCENARIOS: Readonly<Record<SuiteFamily, readonly ScenarioDefinition[]>> = {
  preflight: preflight.scenarios,
  "node-loss": nodeLoss.scenarios,
  "node-pressure": nodePressure.scenarios,
  partition: partition.scenarios,
  "zone-outage": zoneOutage.scenarios,
  "zone-disruption": zoneDisruption.scenarios,
  "controller-failover": controllerFailover.scenarios,
  "graceful-shutdown": gracefulShutdown.scenarios,
  safety: safety.scenarios,
};

/** Every scenario of every family, in run order. */
export function allScenarios(): ScenarioDefinition[] {
  return SUITE_FAMILIES.flatMap((family) => SCENARIOS[family]);
}
