// Safety: the recovery controller under hostile conditions. Each scenario injects one condition a
// real cluster has and today's sim would not show, and asserts from the API that no reachable node
// is fenced, no out-of-service taint comes before a confirmed fence, one incident gives one
// power-off, and nothing of the controller's is left once the node is back (lib/scenario/safety.ts).
// One file of this folder per group of scenarios, each written with safetyScenario (define.ts: the
// shared skeleton); the steps and milestones they share are in shared.ts and hangs.ts.
import { everyZoneSilentHealed } from "./all-zones-silent.js";
import { badFenceConfigRefused } from "./bad-config.js";
import { daemonSetAndFinalizer } from "./cleanup.js";
import {
  cancelledThenRestarted,
  errorFenceBmcBack,
  handMadeWhilePaused,
  poweredOffAfterRenewal,
} from "./dead-ends.js";
import {
  controllerKilledAtEveryStep,
  driverHangsTwoReplicas,
  nodeFenceDeletedByHand,
} from "./controller-trouble.js";
import { nodeReregisteredMidFence, poweredOnBeforeCleanup, poweredOnBeforeTaint } from "./held-controller.js";
import { manualSecondIncident } from "./manual-fence.js";
import {
  zoneNodesLostTogether,
  zoneNodesPoweredOffTogether,
  zoneNodesSilentTogetherHealed,
} from "./mass-silence.js";
import { powerOffHangsWhileAnotherRenews } from "./present.js";
import { earlyPowerReadHangs } from "./early-power.js";
import {
  apiServerPaused,
  kubeletClockBehind,
  powerLossNoticesWhileOn,
  zonePartitionHealed,
} from "./no-fence.js";

export {
  apiServerPaused,
  badFenceConfigRefused,
  cancelledThenRestarted,
  errorFenceBmcBack,
  everyZoneSilentHealed,
  handMadeWhilePaused,
  poweredOffAfterRenewal,
  controllerKilledAtEveryStep,
  daemonSetAndFinalizer,
  driverHangsTwoReplicas,
  kubeletClockBehind,
  manualSecondIncident,
  nodeFenceDeletedByHand,
  nodeReregisteredMidFence,
  poweredOnBeforeCleanup,
  poweredOnBeforeTaint,
  powerLossNoticesWhileOn,
  powerOffHangsWhileAnotherRenews,
  zonePartitionHealed,
  zoneNodesLostTogether,
  zoneNodesSilentTogetherHealed,
};

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [
  badFenceConfigRefused,
  poweredOnBeforeTaint,
  poweredOnBeforeCleanup,
  daemonSetAndFinalizer,
  manualSecondIncident,
  driverHangsTwoReplicas,
  powerOffHangsWhileAnotherRenews,
  nodeFenceDeletedByHand,
  controllerKilledAtEveryStep,
  zonePartitionHealed,
  kubeletClockBehind,
  apiServerPaused,
  nodeReregisteredMidFence,
  cancelledThenRestarted,
  errorFenceBmcBack,
  handMadeWhilePaused,
  poweredOffAfterRenewal,
  zoneNodesSilentTogetherHealed,
  zoneNodesLostTogether,
  zoneNodesPoweredOffTogether,
  everyZoneSilentHealed,
  earlyPowerReadHangs,
  powerLossNoticesWhileOn,
];
