// The controller's command-line flags and the settings they make, checked. Pure: used by
// `rekindle controller` and by whatever must know how a shipped manifest's args configure the
// controller (the in-cluster scenario's expected timeline).
import { hostname } from "node:os";
import type { parseArgs } from "node:util";
import { parseOptions } from "../util/parse-options.js";
import { RekindleError } from "../errors.js";
import { parseCount } from "../util/parse-count.js";
import { metricsAddress, type MetricsAddress } from "./metrics-address.js";
import { parseNodeSelector } from "./node-selector.js";
import { FLEET_FLAG_OPTIONS, fleetSettingsFrom, validateFleetConfig } from "./fleet-config.js";
import {
  DEFAULT_CONTROLLER_CONFIG,
  DURATION_BOUNDS_MS,
  LEASE_READS_PER_CHECK,
  parseBoundedDuration,
  validateControllerConfig,
  type ControllerConfig,
} from "./config.js";

/** The leader Lease's duration (the LeaderElector's default, passed explicitly so the check-interval bound uses it). */
export const LEADER_LEASE_DURATION_MS = 15_000;

const OPTIONS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
  "fence-config": { type: "string" },
  "sim-cluster": { type: "string" },
  "unhealthy-after": { type: "string" },
  "check-interval": { type: "string" },
  "max-unhealthy": { type: "string" },
  "node-selector": { type: "string" },
  namespace: { type: "string" },
  "metrics-bind-address": { type: "string" },
  "metrics-port": { type: "string" },
  "power-on-after-fence": { type: "boolean", default: false },
  "no-early-power-read": { type: "boolean", default: false },
  "leader-elect": { type: "boolean", default: false },
  "install-crd": { type: "boolean", default: false },
  "healthy-before-unfence": { type: "string" },
  "cleanup-timeout": { type: "string" },
  "stale-wait": { type: "string" },
  "driver-timeout": { type: "string" },
  "max-fences-per-window": { type: "string" },
  "fence-rate-window": { type: "string" },
  "node-concurrency": { type: "string" },
  "api-timeout": { type: "string" },
  "pass-timeout": { type: "string" },
  "manual-confirm-timeout": { type: "string" },
  "max-retry-backoff": { type: "string" },
  "recovery-timeout": { type: "string" },
  ...FLEET_FLAG_OPTIONS,
  "watch-stale-after": { type: "string" },
  "lease-read-interval": { type: "string" },
} as const;

/** Duration flags beyond detection, each a ControllerConfig field with its bounds. */
const DURATION_FLAGS = [
  ["healthy-before-unfence", "healthyBeforeUnfenceMs"],
  ["cleanup-timeout", "cleanupTimeoutMs"],
  ["stale-wait", "staleWaitMs"],
  ["driver-timeout", "driverTimeoutMs"],
  ["fence-rate-window", "fenceRateWindowMs"],
  ["api-timeout", "apiTimeoutMs"],
  ["pass-timeout", "passTimeoutMs"],
  ["manual-confirm-timeout", "manualConfirmTimeoutMs"],
  ["max-retry-backoff", "maxRetryBackoffMs"],
  ["recovery-timeout", "recoveryTimeoutMs"],
  ["watch-stale-after", "watchStaleAfterMs"],
  ["lease-read-interval", "leaseReadIntervalMs"],
] as const;

export type ControllerFlags = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"];

/** --max-fences-per-window: at least 1 (0 would never fence at all: pause the controller instead). */
function parseFenceLimit(text: string): number {
  const value = parseCount("--max-fences-per-window", text);
  if (value < 1) {
    throw RekindleError.invalidInput(
      "--max-fences-per-window",
      text,
      'a count of 1 or more (to stop fencing, set paused: "true" in the controller\'s ConfigMap)',
    );
  }
  return value;
}

/** The most nodes one pass handles at once: beyond, a pass's API calls crowd the API server. */
export const MAX_NODE_CONCURRENCY = 64;

/** --node-concurrency: 1 to MAX_NODE_CONCURRENCY. */
function parseNodeConcurrency(text: string): number {
  const value = parseCount("--node-concurrency", text);
  if (value < 1 || value > MAX_NODE_CONCURRENCY) {
    throw RekindleError.invalidInput("--node-concurrency", text, `a count from 1 to ${MAX_NODE_CONCURRENCY}`);
  }
  return value;
}

/** The command's flags (node:util parseArgs, strict: an unknown flag throws). */
export function parseControllerFlags(args: string[]): ControllerFlags {
  return parseOptions({ args, options: OPTIONS, strict: true }).values;
}

/** Where the controller runs, as far as its defaults care. */
export interface ControllerEnvironment {
  /** In a pod (KUBERNETES_SERVICE_HOST set): metrics listen on every interface by default. Default false. */
  inCluster?: boolean;
  /**
   * The pod's namespace (from its service account), the default of --namespace: a kustomize
   * overlay that moves the manifests to another namespace moves the controller's own objects too.
   * Default: none (--namespace's own default, rekindle-system).
   */
  namespace?: string;
  /**
   * kube-controller-manager's --node-monitor-grace-period where it is known (a sim cluster's
   * profile), the default of --node-monitor-grace-period. Default: none (its own default, 50 s).
   */
  nodeMonitorGracePeriodMs?: number;
}

/**
 * The controller's settings from its flags, checked (ranges, and against each other). Pure: the
 * environment is an argument.
 */
export function controllerSettings(
  values: ControllerFlags,
  environment: ControllerEnvironment = {},
): {
  config: ControllerConfig;
  /** Where /metrics and /healthz listen. */
  metrics: MetricsAddress;
  /** metrics.port. */
  metricsPort: number;
} {
  const config: ControllerConfig = {
    ...DEFAULT_CONTROLLER_CONFIG,
    identity: `${hostname()}-${process.pid}`,
    ...(values["unhealthy-after"] !== undefined
      ? {
          unhealthyAfterMs: parseBoundedDuration(
            "--unhealthy-after",
            values["unhealthy-after"],
            DURATION_BOUNDS_MS.unhealthyAfterMs,
          ),
        }
      : {}),
    ...(values["check-interval"] !== undefined
      ? {
          checkIntervalMs: parseBoundedDuration(
            "--check-interval",
            values["check-interval"],
            DURATION_BOUNDS_MS.checkIntervalMs,
          ),
        }
      : {}),
    ...Object.fromEntries(
      DURATION_FLAGS.filter(([flag]) => values[flag] !== undefined).map(([flag, field]) => [
        field,
        parseBoundedDuration(`--${flag}`, values[flag] ?? "", DURATION_BOUNDS_MS[field]),
      ]),
    ),
    ...(values["max-fences-per-window"] !== undefined
      ? { maxFencesPerWindow: parseFenceLimit(values["max-fences-per-window"]) }
      : {}),
    ...(values["node-concurrency"] !== undefined
      ? { nodeConcurrency: parseNodeConcurrency(values["node-concurrency"]) }
      : {}),
    ...(values["max-unhealthy"] !== undefined ? { maxUnhealthy: values["max-unhealthy"] } : {}),
    ...((values.namespace ?? environment.namespace) !== undefined
      ? { namespace: values.namespace ?? environment.namespace }
      : {}),
    // Parsed here so a bad selector fails at start, naming the flag.
    ...(values["node-selector"] !== undefined
      ? { nodeSelector: parseNodeSelector(values["node-selector"]).text }
      : {}),
    ...(environment.nodeMonitorGracePeriodMs !== undefined
      ? { nodeMonitorGracePeriodMs: environment.nodeMonitorGracePeriodMs }
      : {}),
    ...fleetSettingsFrom(values),
    powerOnAfterFence: values["power-on-after-fence"],
    earlyPowerRead: !values["no-early-power-read"],
  };
  // Blindness must be told before a silence is a loss: a short --unhealthy-after shortens the default.
  if (values["watch-stale-after"] === undefined) {
    config.watchStaleAfterMs = Math.min(config.watchStaleAfterMs, Math.floor(config.unhealthyAfterMs / 2));
  }
  // Renewals are seen at most a quarter check late: a short --check-interval shortens the default.
  if (values["lease-read-interval"] === undefined) {
    config.leaseReadIntervalMs = Math.min(
      config.leaseReadIntervalMs,
      Math.floor(config.checkIntervalMs / LEASE_READS_PER_CHECK),
    );
  }
  // A pass outlasts a driver call and two API calls: a longer --driver-timeout lengthens its default.
  if (values["pass-timeout"] === undefined) {
    config.passTimeoutMs = Math.max(config.passTimeoutMs, config.driverTimeoutMs + 2 * config.apiTimeoutMs);
  }
  validateControllerConfig(
    config,
    values["leader-elect"] ? { leaseDurationMs: LEADER_LEASE_DURATION_MS } : {},
  );
  validateFleetConfig(config);
  const metrics = metricsAddress(values, environment.inCluster ?? false);
  return { config, metrics, metricsPort: metrics.port };
}
