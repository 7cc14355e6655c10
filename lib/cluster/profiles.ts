// Timing profiles: the cluster's node-loss timing knobs. The expected-timeline model reads these.
import { RekindleError } from "../errors.js";

export interface TimingProfile {
  name: TimingProfileName;
  /** Node Lease duration; the kubelet (kwok) renews every quarter of it. Upstream: 40 s. */
  nodeLeaseDurationSeconds: number;
  /** KCM --node-monitor-grace-period. Upstream: 50 s (since 1.32). */
  nodeMonitorGracePeriodSeconds: number;
  /** KCM --node-monitor-period. Upstream: 5 s. */
  nodeMonitorPeriodSeconds: number;
  /** KCM --node-startup-grace-period. Upstream: 60 s. */
  nodeStartupGracePeriodSeconds: number;
  /** KCM --node-eviction-rate (nodes tainted per second in a healthy zone). Upstream: 0.1. */
  nodeEvictionRate: number;
  /** apiserver --default-not-ready-toleration-seconds. Upstream: 300. */
  defaultNotReadyTolerationSeconds: number;
  /** apiserver --default-unreachable-toleration-seconds. Upstream: 300. */
  defaultUnreachableTolerationSeconds: number;
}

export const TIMING_PROFILE_NAMES = ["default", "fast"] as const;
export type TimingProfileName = (typeof TIMING_PROFILE_NAMES)[number];

export const TIMING_PROFILES: Readonly<Record<TimingProfileName, TimingProfile>> = {
  default: {
    name: "default",
    nodeLeaseDurationSeconds: 40,
    nodeMonitorGracePeriodSeconds: 50,
    nodeMonitorPeriodSeconds: 5,
    nodeStartupGracePeriodSeconds: 60,
    nodeEvictionRate: 0.1,
    defaultNotReadyTolerationSeconds: 300,
    defaultUnreachableTolerationSeconds: 300,
  },
  // CI-sized: the same chain of events, compressed. Grace stays several lease renewals (2 s each)
  // long so a busy 2-core machine does not flap nodes.
  fast: {
    name: "fast",
    nodeLeaseDurationSeconds: 8,
    nodeMonitorGracePeriodSeconds: 10,
    nodeMonitorPeriodSeconds: 1,
    nodeStartupGracePeriodSeconds: 20,
    nodeEvictionRate: 1,
    defaultNotReadyTolerationSeconds: 5,
    defaultUnreachableTolerationSeconds: 5,
  },
};

/** How often the kubelet (kwok) renews its node Lease: a quarter of the Lease duration. */
export function leaseRenewIntervalMs(profile: TimingProfile): number {
  return (profile.nodeLeaseDurationSeconds * 1000) / 4;
}

export function timingProfile(name: string): TimingProfile {
  if ((TIMING_PROFILE_NAMES as readonly string[]).includes(name))
    return TIMING_PROFILES[name as TimingProfileName];
  throw RekindleError.invalidInput("profile", name, TIMING_PROFILE_NAMES);
}
