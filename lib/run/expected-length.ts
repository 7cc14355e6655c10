// How long a scenario is expected to run, from the catalogue's own windows (what `rekindle list`
// prints): the latest end of any bounded window, measured from the fault. `--parallel` hands the
// longest first to whichever cluster is free, so the 6-minute by-hand scenarios start at once on
// different clusters instead of ending the run on one.
import { simProviderLatencies } from "../cluster/sim/boot/options.js";
import type { TimingProfile } from "../cluster/profiles.js";
import { nominalWindows, type ExpectedMilestone } from "../expect/model.js";
import { expectationInputs, type ExpectationInputs, type ScenarioDefinition } from "../scenario/harness.js";

/** The inputs `rekindle list` resolves windows with: the sim provider's (kind differs only in pod start and attach latency). */
export function listExpectationInputs(profile: TimingProfile): ExpectationInputs {
  return expectationInputs({
    profile,
    eviction: profile.simKubelet,
    latencies: simProviderLatencies(profile.simKubelet),
    volumeAttachRequired: true,
    // The sim's kube-controller-manager log is read for forced detaches.
    controllerManagerLogged: true,
  });
}

/**
 * The latest end of a scenario's bounded windows in ms from the fault (0 when it has none, e.g.
 * the preflight's read-only check). Setup and cleanup are not in it; they cost about the same in
 * every scenario, so the order it gives is the order of the scenarios' real lengths.
 */
export function expectedEndMs(expected: readonly ExpectedMilestone[]): number {
  const ends = nominalWindows(expected).flatMap((w) => (w.maxMs === null ? [] : [w.maxMs]));
  return Math.max(0, ...ends);
}

/** A scenario's expected length: its windows' end and the watch after them (ScenarioDefinition.watchMs). */
export function scenarioLengthMs(
  definition: Pick<ScenarioDefinition, "expected" | "watchMs">,
  inputs: ExpectationInputs,
): number {
  return expectedEndMs(definition.expected(inputs)) + (definition.watchMs?.(inputs) ?? 0);
}
