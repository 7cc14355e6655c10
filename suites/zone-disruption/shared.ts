// What the zone-disruption scenarios share: their zones, plans from the profile's knobs, windows.
import type { TimingProfile } from "../../lib/cluster/profiles.js";
import { RekindleError } from "../../lib/errors.js";
import {
  clientBacklogMs,
  controllerRequestRate,
  largeZonePlan,
  lostNodeRequests,
  normalEvictionByMs,
  smallZonePlan,
  unknownAfterStopMs,
  type ZonePlan,
} from "../../lib/expect/zone-disruption.js";
import type { ExpectedMilestone } from "../../lib/expect/windows.js";
import type { ExpectationInputs } from "../../lib/scenario/harness.js";

export const SMALL_ZONE = "zd-small";
export const LARGE_ZONE = "zd-large";
export const LAST_ZONE = "zd-last";
export const RETURN_ZONE = "zd-return";
/** every-zone-full's zones for the other nodes, when their own are too large to be tainted soon (zd-rest-1, -2…). */
export const REST_ZONE_PREFIX = "zd-rest-";
/** The most NoExecute taints the entering pass lifts, for its window: every sim worker of a scenario-sized cluster. */
export const SIM_MAX_LIFTED = 60;
/** The scenario stops its judged nodes once it reads the zone's state (kube-controller-manager's log, read each second). */
export const SECOND_LOSS_AFTER_MS = 2_000;

function planOrThrow(plan: ZonePlan | undefined, what: string, profile: TimingProfile): ZonePlan {
  if (plan !== undefined) return plan;
  throw new RekindleError(
    "INVALID_INPUT",
    `profile ${profile.name}: no ${what} zone can be made of its zone knobs`,
    {
      hint: "unhealthyZoneThreshold below 1, largeClusterSizeThreshold of 5 or more",
    },
  );
}

export const smallPlan = (profile: TimingProfile) => planOrThrow(smallZonePlan(profile), "small", profile);
export const largePlan = (profile: TimingProfile) => planOrThrow(largeZonePlan(profile), "large", profile);

/** Pods on each worker before a scenario deploys its own: two DaemonSets' on the sim, as on kind. */
export const DAEMON_PODS_PER_NODE = 2;

/** The node lifecycle controller's requests for `nodes` lost at once with `podsPerNode` pods each (the estimate a run refines). */
export function firstLossRequests(nodes: number, podsPerNode = DAEMON_PODS_PER_NODE): number {
  return nodes * lostNodeRequests(podsPerNode);
}

/**
 * The window of the zone's state change: the last of the first loss's nodes seen Unknown, later by
 * the controller's client backlog when the loss's `requests` (firstLossRequests) pass its burst.
 */
export function partialWindow(
  inputs: ExpectationInputs,
  zone: string,
  why: string,
  requests: number,
): ExpectedMilestone {
  const unknown = unknownAfterStopMs(inputs.profile);
  const backlogMs = clientBacklogMs(inputs.profile, requests);
  const rate = controllerRequestRate(inputs.profile);
  return inputs.within({
    name: `zone-state:${zone}:PartialDisruption`,
    after: "fault-injected",
    minMs: unknown.minMs,
    maxMs: unknown.maxMs + backlogMs,
    why:
      backlogMs > 0
        ? `${why}; the monitor pass ends ${backlogMs / 1000} s later: ${requests} requests for the lost nodes at ${rate} a second (kube-controller-manager's QPS, or the API server's pace)`
        : why,
  });
}

/** The zone lost last in the every-zone scenario: a small zone with two judged nodes, the last one making it FullDisruption. */
export function lastZonePlan(profile: TimingProfile): ZonePlan {
  const plan = smallPlan(profile);
  return { ...plan, judged: plan.size - plan.firstLoss };
}

/** How long a scenario that expects no eviction watches after its last window: a pod would be evicted by then at the normal rate. */
export function noEvictionWatchMs(inputs: ExpectationInputs): number {
  return normalEvictionByMs(inputs.profile) + inputs.slackMs;
}
