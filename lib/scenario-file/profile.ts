// A scenario file's timing: its profile with the file's knob overrides applied. The cluster is
// built from the resulting profile (the sim's flags, kind's rendered config), and the expected
// windows are computed from it, so a knob the file changes moves both.
import { timingProfile, type TimingProfile } from "../cluster/profiles.js";
import { RekindleError } from "../errors.js";
import type { ClusterSpec, KnobOverrides } from "./types.js";

/** Whole seconds, as the flags take them; a fraction would be silently truncated by the component. */
function wholeSeconds(ms: number, knob: string): number {
  if (ms % 1000 !== 0 || ms <= 0) {
    throw new RekindleError(
      "INVALID_INPUT",
      `cluster.knobs.${knob} ${ms} ms is not a whole number of seconds`,
      {
        hint: `${knob} is a flag in whole seconds: write e.g. 30s`,
      },
    );
  }
  return ms / 1000;
}

/** The profile with every override of `knobs` applied (the name stays the base profile's). */
export function withKnobs(base: TimingProfile, knobs: KnobOverrides = {}): TimingProfile {
  const p: TimingProfile = {
    ...base,
    controller: { ...base.controller },
    simKubelet: { ...base.simKubelet },
  };
  if (knobs.nodeMonitorGracePeriodMs !== undefined)
    p.nodeMonitorGracePeriodSeconds = wholeSeconds(knobs.nodeMonitorGracePeriodMs, "nodeMonitorGracePeriod");
  if (knobs.nodeMonitorPeriodMs !== undefined)
    p.nodeMonitorPeriodSeconds = wholeSeconds(knobs.nodeMonitorPeriodMs, "nodeMonitorPeriod");
  if (knobs.nodeLeaseDurationMs !== undefined)
    p.nodeLeaseDurationSeconds = wholeSeconds(knobs.nodeLeaseDurationMs, "nodeLeaseDuration");
  if (knobs.defaultNotReadyTolerationMs !== undefined)
    p.defaultNotReadyTolerationSeconds = wholeSeconds(
      knobs.defaultNotReadyTolerationMs,
      "defaultNotReadyToleration",
    );
  if (knobs.defaultUnreachableTolerationMs !== undefined)
    p.defaultUnreachableTolerationSeconds = wholeSeconds(
      knobs.defaultUnreachableTolerationMs,
      "defaultUnreachableToleration",
    );
  if (knobs.shutdownGracePeriodMs !== undefined)
    p.simKubelet.shutdownGracePeriodMs = knobs.shutdownGracePeriodMs;
  if (knobs.pressureTransitionPeriodMs !== undefined)
    p.simKubelet.pressureTransitionPeriodMs = knobs.pressureTransitionPeriodMs;
  if (p.nodeMonitorGracePeriodSeconds * 1000 <= (p.nodeLeaseDurationSeconds * 1000) / 4) {
    throw new RekindleError(
      "INVALID_INPUT",
      `cluster.knobs: nodeMonitorGracePeriod ${p.nodeMonitorGracePeriodSeconds}s is not longer than one Lease renewal (${p.nodeLeaseDurationSeconds / 4}s): every node would flap NotReady`,
      { hint: "keep nodeMonitorGracePeriod several renewals (nodeLeaseDuration / 4) long" },
    );
  }
  return p;
}

/**
 * The knobs a provider reads from the kubelet's own config rather than from the profile: on kind
 * they live in the kind config, so the file says them there (cluster.kindConfig).
 */
export const KUBELET_KNOBS = ["shutdownGracePeriodMs", "pressureTransitionPeriodMs"] as const;

/** A run's profile: the named profile (default "default") with the cluster section's knobs. */
export function clusterProfile(cluster: ClusterSpec, profileName: string | undefined): TimingProfile {
  return withKnobs(timingProfile(profileName ?? "default"), cluster.knobs);
}
