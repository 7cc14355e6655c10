// The settings of "no mass power-off" (fleet.ts, fence-rate.ts, zones.ts): their flags, parsed and
// checked against each other. Pure.
import { RekindleError } from "../errors.js";
import { parseCount } from "../util/parse-count.js";
import { DURATION_BOUNDS_MS, parseBoundedDuration, type ControllerConfig } from "./config.js";

export type FleetConfig = Pick<
  ControllerConfig,
  | "nodeMonitorGracePeriodMs"
  | "silenceWindowMs"
  | "fenceRatePerMinute"
  | "secondaryFenceRatePerMinute"
  | "fenceBurst"
  | "unhealthyZoneThreshold"
>;

/** The flags, as parseArgs returns them. */
export interface FleetFlags {
  "node-monitor-grace-period"?: string | undefined;
  "silence-window"?: string | undefined;
  "fence-rate"?: string | undefined;
  "secondary-fence-rate"?: string | undefined;
  "fence-burst"?: string | undefined;
  "unhealthy-zone-threshold"?: string | undefined;
}

export const FLEET_FLAG_OPTIONS = {
  "node-monitor-grace-period": { type: "string" },
  "silence-window": { type: "string" },
  "fence-rate": { type: "string" },
  "secondary-fence-rate": { type: "string" },
  "fence-burst": { type: "string" },
  "unhealthy-zone-threshold": { type: "string" },
} as const;

/** Fence starts per minute: above 0 (0 would never fence: pause the controller instead), at most 600. */
export const FENCE_RATE_BOUNDS = { min: 0.01, max: 600 } as const;
export const MAX_FENCE_BURST = 100;

function parseRate(flag: string, text: string): number {
  const value = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text.trim()) || value < FENCE_RATE_BOUNDS.min || value > FENCE_RATE_BOUNDS.max) {
    throw RekindleError.invalidInput(
      flag,
      text,
      `fence starts per minute, a number from ${FENCE_RATE_BOUNDS.min} to ${FENCE_RATE_BOUNDS.max} (to stop fencing, set paused: "true" in the controller's ConfigMap)`,
    );
  }
  return value;
}

function parseThreshold(text: string): number {
  const value = Number(text);
  if (!/^\d*\.?\d+$/.test(text.trim()) || value <= 0 || value > 1) {
    throw RekindleError.invalidInput(
      "--unhealthy-zone-threshold",
      text,
      "a fraction of a zone's nodes above 0 and at most 1, such as 0.55",
    );
  }
  return value;
}

function parseBurst(text: string): number {
  const value = parseCount("--fence-burst", text);
  if (value < 1 || value > MAX_FENCE_BURST) {
    throw RekindleError.invalidInput("--fence-burst", text, `a count from 1 to ${MAX_FENCE_BURST}`);
  }
  return value;
}

/** The settings the given flags change (the rest keep their defaults). */
export function fleetSettingsFrom(values: FleetFlags): Partial<FleetConfig> {
  const grace = values["node-monitor-grace-period"];
  const window = values["silence-window"];
  return {
    ...(grace !== undefined
      ? {
          nodeMonitorGracePeriodMs: parseBoundedDuration(
            "--node-monitor-grace-period",
            grace,
            DURATION_BOUNDS_MS.nodeMonitorGracePeriodMs,
          ),
        }
      : {}),
    ...(window !== undefined
      ? {
          silenceWindowMs: parseBoundedDuration(
            "--silence-window",
            window,
            DURATION_BOUNDS_MS.silenceWindowMs,
          ),
        }
      : {}),
    ...(values["fence-rate"] !== undefined
      ? { fenceRatePerMinute: parseRate("--fence-rate", values["fence-rate"]) }
      : {}),
    ...(values["secondary-fence-rate"] !== undefined
      ? { secondaryFenceRatePerMinute: parseRate("--secondary-fence-rate", values["secondary-fence-rate"]) }
      : {}),
    ...(values["fence-burst"] !== undefined ? { fenceBurst: parseBurst(values["fence-burst"]) } : {}),
    ...(values["unhealthy-zone-threshold"] !== undefined
      ? { unhealthyZoneThreshold: parseThreshold(values["unhealthy-zone-threshold"]) }
      : {}),
  };
}

/** The secondary rate is the slower one: otherwise a disrupted zone would be fenced faster. */
export function validateFleetConfig(config: FleetConfig): void {
  if (config.secondaryFenceRatePerMinute > config.fenceRatePerMinute) {
    throw new RekindleError(
      "INVALID_INPUT",
      `--secondary-fence-rate ${config.secondaryFenceRatePerMinute} is faster than --fence-rate ${config.fenceRatePerMinute}; valid: at most ${config.fenceRatePerMinute} fence starts per minute`,
    );
  }
}
