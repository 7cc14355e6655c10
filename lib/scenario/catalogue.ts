// Every scenario `rekindle run` knows, by suite family. node-loss has its own runner (it predates
// the shared harness); the rest are ScenarioDefinitions run by lib/scenario/harness.ts.
import type { NodeCapability } from "../cluster/provider.js";
import type { ScenarioDefinition } from "./harness.js";
import { leaderKilledMidFence } from "./families/failover.js";
import { gracefulShutdownNoFence } from "./families/graceful-shutdown.js";
import { partitionHealedAfterFence, partitionHealedBeforeDetection } from "./families/partition.js";
import { nodeHeartbeats } from "./families/preflight.js";
import { diskPressure, memoryPressure } from "./families/pressure.js";
import { zoneOutageGuardHolds } from "./families/zone-outage.js";

export const SUITE_FAMILIES = [
  "preflight",
  "node-loss",
  "node-pressure",
  "partition",
  "zone-outage",
  "controller-failover",
  "graceful-shutdown",
] as const;
export type SuiteFamily = (typeof SUITE_FAMILIES)[number];

export const HARNESS_SCENARIOS: Readonly<Record<Exclude<SuiteFamily, "node-loss">, ScenarioDefinition[]>> = {
  preflight: [nodeHeartbeats],
  "node-pressure": [memoryPressure, diskPressure],
  partition: [partitionHealedBeforeDetection, partitionHealedAfterFence],
  "zone-outage": [zoneOutageGuardHolds],
  "controller-failover": [leaderKilledMidFence],
  "graceful-shutdown": [gracefulShutdownNoFence],
};

/** What node-loss scenarios need from a provider. */
export const NODE_LOSS_REQUIRES: readonly NodeCapability[] = ["lifecycle"];
