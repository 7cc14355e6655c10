// Timing profiles: every timing value a run depends on — the cluster's node-loss knobs, the
// recovery controller's settings in scenarios, the sim kubelet's, the expected windows' slack.
// Parsed once at the edge (`timingProfile`); nothing downstream compares profile names.
import { RekindleError } from "../errors.js";

/** Kubelet eviction and shutdown settings (from kind-config.yaml, the sim's model, or upstream's). */
export interface EvictionSettings {
  /** How long a pressure condition stays True after the signal clears. Kubelet default 5 m. */
  pressureTransitionPeriodMs: number;
  /** How often the kubelet's eviction manager looks (10 s upstream, housekeeping). */
  monitoringIntervalMs: number;
  /**
   * How often the kubelet writes its node status (nodeStatusUpdateFrequency, 10 s upstream): a
   * pressure condition the eviction manager has seen reaches the API at the next write.
   */
  statusUpdateIntervalMs: number;
  /** Kubelet graceful node shutdown budget (shutdownGracePeriod). */
  shutdownGracePeriodMs: number;
}

/**
 * kind-config.yaml's kubelet: 30 s transition period and shutdown grace, 10 s status updates; 10 s
 * eviction monitoring is the kubelet's own (test/unit/profiles.test.ts keeps them equal).
 */
export const KIND_CONFIG_KUBELET: EvictionSettings = {
  pressureTransitionPeriodMs: 30_000,
  monitoringIntervalMs: 10_000,
  statusUpdateIntervalMs: 10_000,
  shutdownGracePeriodMs: 30_000,
};

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
  /**
   * KCM --secondary-node-eviction-rate: the taint rate in a PartialDisruption zone larger than
   * largeClusterSizeThreshold (a smaller such zone gets none). Upstream: 0.01. Never exactly 1 (see
   * nodeEvictionRate's note in the fast profile).
   */
  secondaryNodeEvictionRate: number;
  /** KCM --unhealthy-zone-threshold: the not-Ready share (> 2 nodes) that makes a zone PartialDisruption. Upstream: 0.55. */
  unhealthyZoneThreshold: number;
  /** KCM --large-cluster-size-threshold: a zone of more nodes than this keeps the secondary rate when partially disrupted. Upstream: 50. */
  largeClusterSizeThreshold: number;
  /** apiserver --default-not-ready-toleration-seconds. Upstream: 300. */
  defaultNotReadyTolerationSeconds: number;
  /** apiserver --default-unreachable-toleration-seconds. Upstream: 300. */
  defaultUnreachableTolerationSeconds: number;
  /** Tolerance on every expected window's bounds for scheduling noise. */
  slackMs: number;
  /** The recovery controller as scenarios run it in-process. */
  controller: {
    /** Lease age after which a node counts as lost (the controller's `--unhealthy-after`). */
    unhealthyAfterMs: number;
    checkIntervalMs: number;
    /** A returned node stays healthy this long before its taints are lifted (`--healthy-before-unfence`). */
    healthyBeforeUnfenceMs: number;
  };
  /** The controller-failover scenario's leader-election Lease: short, so failover fits the profile. */
  failoverLeaseMs: number;
  /** The sim's kubelet eviction and shutdown managers (kind reads its kubelet config instead). */
  simKubelet: EvictionSettings;
  /**
   * kube-controller-manager's client rate limit (--kube-api-qps, --kube-api-burst); absent:
   * upstream's 20 QPS, burst 30, which spreads a mass node loss's status updates over minutes.
   */
  controllerManagerClient?: { qps: number; burst: number };
}

export const TIMING_PROFILE_NAMES = ["default", "fast", "large"] as const;
export type TimingProfileName = (typeof TIMING_PROFILE_NAMES)[number];

/** Upstream's numbers. */
const DEFAULT_PROFILE: TimingProfile = {
  name: "default",
  nodeLeaseDurationSeconds: 40,
  nodeMonitorGracePeriodSeconds: 50,
  nodeMonitorPeriodSeconds: 5,
  nodeStartupGracePeriodSeconds: 60,
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  unhealthyZoneThreshold: 0.55,
  largeClusterSizeThreshold: 50,
  defaultNotReadyTolerationSeconds: 300,
  defaultUnreachableTolerationSeconds: 300,
  slackMs: 3_000,
  // Upstream-like detection: well past a few missed renewals (10 s each), well before 50 s grace.
  controller: { unhealthyAfterMs: 20_000, checkIntervalMs: 500, healthyBeforeUnfenceMs: 10_000 },
  failoverLeaseMs: 15_000,
  simKubelet: KIND_CONFIG_KUBELET,
};

export const TIMING_PROFILES: Readonly<Record<TimingProfileName, TimingProfile>> = {
  default: DEFAULT_PROFILE,
  // CI-sized: the same chain of events, compressed. Grace stays several lease renewals (2 s each)
  // long so a busy 2-core machine does not flap nodes.
  fast: {
    name: "fast",
    nodeLeaseDurationSeconds: 8,
    nodeMonitorGracePeriodSeconds: 10,
    nodeMonitorPeriodSeconds: 1,
    nodeStartupGracePeriodSeconds: 20,
    // Not 1: after every zone was fully disrupted (a fresh cluster's nodes are all NotReady until
    // the CNI is up), kube-controller-manager swaps each zone's taint limiter back to this rate,
    // and a swap to exactly 1 is a no-op against its "never" limiter (which reports QPS 1): no
    // NoExecute taint would ever be added again (shared/notes/kind-offline.md).
    nodeEvictionRate: 2,
    // One node every 5 s in a large partially disrupted zone (upstream: every 100 s), and a zone is
    // large past 10 nodes (upstream: 50), so the zone-disruption scenarios need 12 workers, not 52.
    // Not 1 either: a swap back from 0 to exactly 1 is the same no-op.
    secondaryNodeEvictionRate: 0.2,
    unhealthyZoneThreshold: 0.55,
    largeClusterSizeThreshold: 10,
    defaultNotReadyTolerationSeconds: 5,
    defaultUnreachableTolerationSeconds: 5,
    slackMs: 3_000,
    controller: { unhealthyAfterMs: 6_000, checkIntervalMs: 500, healthyBeforeUnfenceMs: 2_000 },
    failoverLeaseMs: 4_000,
    // Not compressed: a real kubelet's eviction manager looks every 10 s whatever it is told
    // (housekeeping), so the sim keeps kind-config.yaml's kubelet, as the default profile does,
    // and docs/calibration.md compares like with like.
    simKubelet: KIND_CONFIG_KUBELET,
  },
  // Hundreds to 1000 sim workers (docs/design.md, "Large sim clusters"): upstream's numbers, whose
  // 40 s Lease (renewed every 10 s) keeps 1000 nodes' renewals under half a core here, where the
  // fast profile's 8 s Lease would take about two. kube-controller-manager's client may send 200
  // requests a second (burst 300) instead of 20 (30): at 20, marking 333 lost nodes' pods not
  // ready took about 9 minutes.
  large: {
    ...DEFAULT_PROFILE,
    name: "large",
    controllerManagerClient: { qps: 200, burst: 300 },
  },
};

/** The profiles the scenario catalogue (docs/scenarios.md) shows: large times scenarios as default does. */
export const CATALOGUE_PROFILE_NAMES: readonly TimingProfileName[] = ["default", "fast"];

/** How often the kubelet (kwok) renews its node Lease: a quarter of the Lease duration. */
export function leaseRenewIntervalMs(profile: Pick<TimingProfile, "nodeLeaseDurationSeconds">): number {
  return (profile.nodeLeaseDurationSeconds * 1000) / 4;
}

export function timingProfile(name: string): TimingProfile {
  if ((TIMING_PROFILE_NAMES as readonly string[]).includes(name))
    return TIMING_PROFILES[name as TimingProfileName];
  throw RekindleError.invalidInput("profile", name, TIMING_PROFILE_NAMES);
}
