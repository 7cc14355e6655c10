// Every scenario `rekindle run` knows, by suite family; all run by lib/scenario/harness.ts.
import { RekindleError } from "../errors.js";
import type { ScenarioDefinition } from "./harness.js";
import { leaderKilledMidFence } from "./families/failover.js";
import { gracefulShutdownNoFence } from "./families/graceful-shutdown.js";
import { nodeLossBaseline, nodeLossController, nodeLossManualOutOfService } from "./families/node-loss.js";
import {
  nodeLossDrainByHand,
  nodeLossForceDeleteByHand,
  nodeLossForceDeleteDetachDisabled,
} from "./families/release-by-hand.js";
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

/** The families named (`--suite`), each checked; none named: every family. */
export function suiteFamilies(names: readonly string[] | undefined): SuiteFamily[] {
  if (names === undefined || names.length === 0) return [...SUITE_FAMILIES];
  return names.map((name) => {
    if (!(SUITE_FAMILIES as readonly string[]).includes(name))
      throw RekindleError.invalidInput("suite", name, SUITE_FAMILIES);
    return name as SuiteFamily;
  });
}

export const SCENARIOS: Readonly<Record<SuiteFamily, ScenarioDefinition[]>> = {
  preflight: [nodeHeartbeats],
  "node-loss": [
    nodeLossBaseline,
    nodeLossManualOutOfService,
    nodeLossController,
    nodeLossForceDeleteByHand,
    nodeLossDrainByHand,
    nodeLossForceDeleteDetachDisabled,
  ],
  "node-pressure": [memoryPressure, diskPressure],
  partition: [partitionHealedBeforeDetection, partitionHealedAfterFence],
  "zone-outage": [zoneOutageGuardHolds],
  "controller-failover": [leaderKilledMidFence],
  "graceful-shutdown": [gracefulShutdownNoFence],
};
