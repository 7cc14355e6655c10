// The expectation inputs of the timeline tests that judge recorded transitions, not a profile's windows.
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { expectationInputs, type ExpectationInputs } from "../../lib/scenario/harness.js";

/** The fast profile, one-second kubelet eviction periods, no measured latencies, no attach, no KCM log. */
export function fastTimelineInputs(): ExpectationInputs {
  return expectationInputs({
    profile: TIMING_PROFILES.fast,
    eviction: {
      pressureTransitionPeriodMs: 1000,
      monitoringIntervalMs: 1000,
      statusUpdateIntervalMs: 1000,
      shutdownGracePeriodMs: 1000,
    },
    latencies: {} as never,
    volumeAttachRequired: false,
    controllerManagerLogged: false,
  });
}
