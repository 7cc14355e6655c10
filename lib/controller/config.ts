// The recovery controller's settings, with documented defaults.
import { RekindleError } from "../errors.js";
import { parseDurationMs } from "../util/duration.js";

export interface ControllerConfig {
  /** A node whose Lease is older than this (or whose Ready is not True for this long) is lost. Default 20 000 ms. */
  unhealthyAfterMs: number;
  /** How often nodes are checked. Default 1000 ms. */
  checkIntervalMs: number;
  /** Never fence more than this many nodes at once (count, or "N%" of nodes), cluster-wide and per zone. Default "40%". */
  maxUnhealthy: string;
  /** Nodes with this label (any value) are never fenced. Default "rekindle.dev/exclude". */
  excludeLabel: string;
  /**
   * Only nodes this label selector matches may be fenced (kubectl -l syntax); the rest are left
   * alone like excluded ones. Default "" (every node).
   */
  nodeSelector: string;
  /** Namespace of the controller's ConfigMap (pause switch), Lease (leader election) and Events. Default "rekindle-system". */
  namespace: string;
  /** ConfigMap whose `paused: "true"` stops new fences. Default "rekindle-controller". */
  configMapName: string;
  /**
   * Failed fence attempts retried after `retryBackoffMs`; later ones wait twice as long each time, up
   * to `maxRetryBackoffMs`. A fence in error is retried for as long as it is under way and the
   * guard allows it. Default 3.
   */
  fenceRetries: number;
  /** How long one attempt waits for the driver to confirm power off. Default 30 000 ms. */
  fenceConfirmTimeoutMs: number;
  /**
   * How long one attempt of the `manual` driver waits for a person to confirm power off (the
   * node's rekindle.dev/power-state=off annotation). Default 600 000 ms (10 min).
   */
  manualConfirmTimeoutMs: number;
  /** Wait between a failed fence attempt and the next. Default 10 000 ms. */
  retryBackoffMs: number;
  /** The longest wait between two attempts of a fence that keeps failing (backoff doubles up to it). Default 300 000 ms. */
  maxRetryBackoffMs: number;
  /**
   * A fence in recovery that has not finished this long after it began waiting is re-evaluated:
   * a node lost and reported off whose workloads were never released goes on to the taint; any
   * other fence ends, its taints lifted, and the node is judged afresh. A fenced node that stays
   * lost after its cleanup is not affected (it waits for its return, nothing held). Default 600 000 ms.
   */
  recoveryTimeoutMs: number;
  /** How long the attach-detach controller gets to detach a fenced node's volumes before the controller deletes leftover VolumeAttachments. Default 5000 ms. */
  detachGraceMs: number;
  /** Power the node back on after cleanup (drivers that can). Default false. */
  powerOnAfterFence: boolean;
  /**
   * Read a silent node's power through its fence driver (not the manual one) once per missed Lease
   * renewal; a node read off is lost at once, without waiting for unhealthyAfter (early-power.ts).
   * Default true.
   */
  earlyPowerRead: boolean;
  /** Identity in leader election and Events. Default "<hostname>-<pid>". */
  identity: string;
  /** A returned node must stay healthy this long before its taints are lifted (damps flapping). Default 10 000 ms. */
  healthyBeforeUnfenceMs: number;
  /** A returned node healthy this long is let go even if pods stuck in deletion remain on it. Default 120 000 ms. */
  staleWaitMs: number;
  /** Cleanup of a fenced node gives up on pods that will not go (finalizers) after this long. Default 120 000 ms. */
  cleanupTimeoutMs: number;
  /** One fence driver call (power off, on, state) is abandoned after this long (less under leader election: see leader.ts). Default 10 000 ms. */
  driverTimeoutMs: number;
  /** At most this many fences of one node start within `fenceRateWindowMs`; more are held. Default 3. */
  maxFencesPerWindow: number;
  /** The window of the per-node fence rate limit. Default 3 600 000 ms (one hour). */
  fenceRateWindowMs: number;
  /**
   * Nodes handled at once within a pass: a node whose driver or API call hangs holds up only its
   * own slot. Default 8.
   */
  nodeConcurrency: number;
  /**
   * One API call (its response included) is abandoned after this long; less at the end of a pass
   * and, under leader election, so that it ends before a standby could take over. Default 10 000 ms.
   */
  apiTimeoutMs: number;
  /**
   * A reconcile pass is cut off after this long: work still under way is abandoned (its calls
   * aborted) and the next pass resumes it from the NodeFence. At least a driver call and two API
   * calls. Default 30 000 ms (with the controller's flags: longer if those need it).
   */
  passTimeoutMs: number;
  /**
   * No mass power-off (fleet.ts): kube-controller-manager's --node-monitor-grace-period. Nodes of
   * a zone that go silent in one event are not fenced before this much time has passed since the
   * last of them went silent (they may be cut off from the API server, not down). Default 50 000 ms
   * (upstream since 1.32); the scenarios use their timing profile's.
   */
  nodeMonitorGracePeriodMs: number;
  /**
   * Nodes of a zone whose last renewals this controller saw within this long of each other went
   * silent "in one event". Default undefined: the node's Lease renewal interval plus two check
   * intervals (nodes cut off at one instant stop renewing within one renewal interval).
   */
  silenceWindowMs?: number;
  /**
   * Fleet-wide fence starts per minute (a token bucket, like kube-controller-manager's
   * --node-eviction-rate). Default 6 (upstream's 0.1 nodes per second).
   */
  fenceRatePerMinute: number;
  /**
   * Fence starts per minute for nodes in a partially disrupted zone and for nodes that went silent
   * together, once held past nodeMonitorGracePeriod (--secondary-node-eviction-rate). Default 1.
   */
  secondaryFenceRatePerMinute: number;
  /** Fence starts the fleet-wide rate allows at once after a quiet time (the buckets' size). Default 1, as upstream's. */
  fenceBurst: number;
  /**
   * A zone with more than 2 nodes not ready and at least this fraction of its nodes not ready is
   * partially disrupted (--unhealthy-zone-threshold). Default 0.55.
   */
  unhealthyZoneThreshold: number;
  /**
   * The node Lease watch is stale (the controller is blind: it acts on nothing, and every node's
   * clock restarts once the watch is current again) when it received nothing (an event, a
   * bookmark, the server's answer to a WATCH or a LIST) for longer than this; a quiet watch is
   * reopened after half of it. The other watches are stale 30 s later (lib/controller/cluster-caches.ts).
   * Less than unhealthyAfter. Default 3000 ms (with the controller's flags: at most half of unhealthyAfter).
   */
  watchStaleAfterMs: number;
  /**
   * The node Lease watch is read at most once per this long: after a read the controller leaves
   * its socket alone this long and the kernel holds what arrives, so a busy watch (100 renewals a
   * second at 1000 nodes) costs one wake-up per read instead of one per renewal, and a quiet one
   * is read as each event comes. A renewal is then seen up to this late. 0: every event as it
   * arrives. At most a quarter of checkInterval and of watchStaleAfter. Default 250 ms (with the
   * controller's flags: at most a quarter of --check-interval).
   */
  leaseReadIntervalMs: number;
}

export const DEFAULT_CONTROLLER_CONFIG: Readonly<Omit<ControllerConfig, "identity">> = {
  unhealthyAfterMs: 20_000,
  checkIntervalMs: 1_000,
  maxUnhealthy: "40%",
  excludeLabel: "rekindle.dev/exclude",
  nodeSelector: "",
  namespace: "rekindle-system",
  configMapName: "rekindle-controller",
  fenceRetries: 3,
  fenceConfirmTimeoutMs: 30_000,
  manualConfirmTimeoutMs: 600_000,
  retryBackoffMs: 10_000,
  maxRetryBackoffMs: 300_000,
  recoveryTimeoutMs: 600_000,
  detachGraceMs: 5_000,
  powerOnAfterFence: false,
  earlyPowerRead: true,
  healthyBeforeUnfenceMs: 10_000,
  staleWaitMs: 120_000,
  cleanupTimeoutMs: 120_000,
  driverTimeoutMs: 10_000,
  maxFencesPerWindow: 3,
  fenceRateWindowMs: 3_600_000,
  nodeConcurrency: 8,
  apiTimeoutMs: 10_000,
  passTimeoutMs: 30_000,
  nodeMonitorGracePeriodMs: 50_000,
  fenceRatePerMinute: 6,
  secondaryFenceRatePerMinute: 1,
  fenceBurst: 1,
  unhealthyZoneThreshold: 0.55,
  watchStaleAfterMs: 3_000,
  leaseReadIntervalMs: 250,
};

/** "2" → {count: 2}; "40%" → {percent: 40}. */
export function parseMaxUnhealthy(text: string): { count: number } | { percent: number } {
  const match = /^(\d+)(%?)$/.exec(text.trim());
  if (!match)
    throw RekindleError.invalidInput(
      "maxUnhealthy",
      text,
      'a node count such as "2" or a percentage such as "40%"',
    );
  const value = Number(match[1]);
  if (match[2] === "%") {
    if (value > 100) throw RekindleError.invalidInput("maxUnhealthy", text, "a percentage from 0% to 100%");
    return { percent: value };
  }
  return { count: value };
}

/**
 * How many nodes out of `total` may be unhealthy or fencing at once under `maxUnhealthy`.
 * Percentages round down but allow at least one node when above 0 %, so a small zone (one or two
 * nodes) can still lose a node while a zone-wide loss is held.
 */
export function unhealthyBudget(maxUnhealthy: string, total: number): number {
  const parsed = parseMaxUnhealthy(maxUnhealthy);
  if ("count" in parsed) return parsed.count;
  if (parsed.percent === 0 || total === 0) return 0;
  return Math.max(1, Math.floor((parsed.percent / 100) * total));
}

/** "20s", "1500ms", "2m" → ms. */
export function parseDuration(flag: string, text: string): number {
  return parseDurationMs(text, flag);
}

/** A range of durations in ms, both ends allowed. */
export interface DurationBoundsMs {
  min: number;
  max: number;
}

/**
 * The settings' valid ranges: 0 would spin (or judge a node lost at its first look), a day would
 * mean no recovery at all. Outside them a value is refused at start-up.
 */
export const DURATION_BOUNDS_MS = {
  checkIntervalMs: { min: 100, max: 60_000 },
  unhealthyAfterMs: { min: 1_000, max: 3_600_000 },
  healthyBeforeUnfenceMs: { min: 0, max: 3_600_000 },
  cleanupTimeoutMs: { min: 5_000, max: 3_600_000 },
  staleWaitMs: { min: 5_000, max: 3_600_000 },
  driverTimeoutMs: { min: 1_000, max: 300_000 },
  fenceRateWindowMs: { min: 60_000, max: 86_400_000 },
  apiTimeoutMs: { min: 1_000, max: 120_000 },
  passTimeoutMs: { min: 5_000, max: 600_000 },
  manualConfirmTimeoutMs: { min: 10_000, max: 86_400_000 },
  maxRetryBackoffMs: { min: 1_000, max: 3_600_000 },
  recoveryTimeoutMs: { min: 60_000, max: 86_400_000 },
  nodeMonitorGracePeriodMs: { min: 1_000, max: 3_600_000 },
  silenceWindowMs: { min: 100, max: 600_000 },
  watchStaleAfterMs: { min: 1_000, max: 60_000 },
  leaseReadIntervalMs: { min: 0, max: 5_000 },
} as const satisfies Record<string, DurationBoundsMs>;

/** The node Lease watch is read at least this many times per check interval (leaseReadIntervalMs). */
export const LEASE_READS_PER_CHECK = 4;

/** unhealthyAfter spans at least this many check intervals: a node is looked at several times before it is lost. */
export const MIN_CHECKS_PER_UNHEALTHY_AFTER = 3;

/**
 * With leader election, the check interval is at most this fraction of the Lease's duration: a
 * standby observes the nodes every check, so when it takes over its view is several checks old at
 * most. (The Lease itself is renewed on its own timer, a fifth of its duration.)
 */
export const MAX_CHECK_INTERVAL_PER_LEASE = 1 / 3;

/** 1500 → "1.5s", 60000 → "1m", 100 → "100ms": the short form of a duration for messages. */
export function formatDurationMs(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1_000) return `${ms / 1_000}s`;
  return `${ms}ms`;
}

/** Refuses `ms` (given as `shown`) outside `bounds`, naming `flag` and the valid range. */
export function assertDurationInBounds(
  flag: string,
  ms: number,
  bounds: DurationBoundsMs,
  shown = formatDurationMs(ms),
): void {
  if (ms >= bounds.min && ms <= bounds.max) return;
  const range = `a duration from ${formatDurationMs(bounds.min)} to ${formatDurationMs(bounds.max)}`;
  throw new RekindleError(
    "INVALID_INPUT",
    `${flag} ${JSON.stringify(shown)} is out of range; valid: ${range}`,
    {
      details: { what: flag, got: shown, valid: range },
    },
  );
}

/** Parses `text` as a duration for `flag` and refuses it outside `bounds`. */
export function parseBoundedDuration(flag: string, text: string, bounds: DurationBoundsMs): number {
  const ms = parseDurationMs(text, flag);
  assertDurationInBounds(flag, ms, bounds, text);
  return ms;
}

/** A Kubernetes namespace name (an RFC 1123 label). */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Refuses settings that contradict each other or leave their range: durations (as DURATION_BOUNDS_MS),
 * unhealthyAfter against the check interval, the check interval against the leader Lease when
 * `leaseDurationMs` is given, maxUnhealthy, the namespace. Flags are named as the CLI spells them.
 */
export function validateControllerConfig(
  config: Pick<ControllerConfig, "checkIntervalMs" | "unhealthyAfterMs" | "maxUnhealthy" | "namespace"> &
    Partial<
      Pick<
        ControllerConfig,
        "passTimeoutMs" | "driverTimeoutMs" | "apiTimeoutMs" | "watchStaleAfterMs" | "leaseReadIntervalMs"
      >
    >,
  options: { leaseDurationMs?: number } = {},
): void {
  assertDurationInBounds("--check-interval", config.checkIntervalMs, DURATION_BOUNDS_MS.checkIntervalMs);
  assertDurationInBounds("--unhealthy-after", config.unhealthyAfterMs, DURATION_BOUNDS_MS.unhealthyAfterMs);
  const minUnhealthyAfter = MIN_CHECKS_PER_UNHEALTHY_AFTER * config.checkIntervalMs;
  if (config.unhealthyAfterMs < minUnhealthyAfter) {
    throw new RekindleError(
      "INVALID_INPUT",
      `--unhealthy-after ${formatDurationMs(config.unhealthyAfterMs)} is shorter than ${MIN_CHECKS_PER_UNHEALTHY_AFTER} check intervals (--check-interval ${formatDurationMs(config.checkIntervalMs)}); valid: at least ${formatDurationMs(minUnhealthyAfter)}, so a node is looked at several times before it is judged lost`,
    );
  }
  if (options.leaseDurationMs !== undefined) {
    const maxInterval = Math.floor(options.leaseDurationMs * MAX_CHECK_INTERVAL_PER_LEASE);
    if (config.checkIntervalMs > maxInterval) {
      throw new RekindleError(
        "INVALID_INPUT",
        `--check-interval ${formatDurationMs(config.checkIntervalMs)} is too long for leader election (Lease ${formatDurationMs(options.leaseDurationMs)}: a standby takes over with a view of the nodes at most one check old); valid: at most ${formatDurationMs(maxInterval)}`,
      );
    }
  }
  assertPassOutlastsItsCalls(config);
  if (config.watchStaleAfterMs !== undefined && config.watchStaleAfterMs >= config.unhealthyAfterMs) {
    throw new RekindleError(
      "INVALID_INPUT",
      `--watch-stale-after ${formatDurationMs(config.watchStaleAfterMs)} is not shorter than --unhealthy-after ${formatDurationMs(config.unhealthyAfterMs)}; valid: less than that, so a stale watch is blindness before a silence is a loss`,
    );
  }
  if (
    config.leaseReadIntervalMs !== undefined &&
    config.leaseReadIntervalMs > config.checkIntervalMs / LEASE_READS_PER_CHECK
  ) {
    throw new RekindleError(
      "INVALID_INPUT",
      `--lease-read-interval ${formatDurationMs(config.leaseReadIntervalMs)} is longer than a quarter of --check-interval ${formatDurationMs(config.checkIntervalMs)}; valid: at most ${formatDurationMs(Math.floor(config.checkIntervalMs / LEASE_READS_PER_CHECK))} (0 reads every renewal as it arrives), so a pass sees renewals at most a quarter check late`,
    );
  }
  if (
    config.leaseReadIntervalMs !== undefined &&
    config.watchStaleAfterMs !== undefined &&
    config.leaseReadIntervalMs > config.watchStaleAfterMs / LEASE_READS_PER_CHECK
  ) {
    throw new RekindleError(
      "INVALID_INPUT",
      `--lease-read-interval ${formatDurationMs(config.leaseReadIntervalMs)} is longer than a quarter of --watch-stale-after ${formatDurationMs(config.watchStaleAfterMs)}; valid: at most ${formatDurationMs(Math.floor(config.watchStaleAfterMs / LEASE_READS_PER_CHECK))}, so the Lease watch is read well before it could look quiet or stale`,
    );
  }
  parseMaxUnhealthy(config.maxUnhealthy);
  if (!NAMESPACE_NAME.test(config.namespace)) {
    throw RekindleError.invalidInput(
      "namespace",
      config.namespace,
      "a Kubernetes namespace name (lower-case letters, digits and -, at most 63)",
    );
  }
}

/**
 * A pass waits on a driver call and the API calls around it: cut shorter, a hanging driver would be
 * abandoned by the pass before its own timeout could mark the fence failed, and be called again
 * every pass with no backoff.
 */
function assertPassOutlastsItsCalls(
  config: Partial<Pick<ControllerConfig, "passTimeoutMs" | "driverTimeoutMs" | "apiTimeoutMs">>,
): void {
  const { passTimeoutMs, driverTimeoutMs, apiTimeoutMs } = config;
  if (passTimeoutMs === undefined || driverTimeoutMs === undefined || apiTimeoutMs === undefined) return;
  const least = driverTimeoutMs + 2 * apiTimeoutMs;
  if (passTimeoutMs < least) {
    throw new RekindleError(
      "INVALID_INPUT",
      `--pass-timeout ${formatDurationMs(passTimeoutMs)} is shorter than a driver call and two API calls (--driver-timeout ${formatDurationMs(driverTimeoutMs)}, --api-timeout ${formatDurationMs(apiTimeoutMs)}); valid: at least ${formatDurationMs(least)}`,
    );
  }
}
