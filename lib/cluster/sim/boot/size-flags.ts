// The size flags of `rekindle sim up`, `rekindle up --provider sim` and `rekindle run`, checked with
// the flag's name and its valid range before anything starts (exit 2).
import { SIM_MAX_WORKERS } from "./addresses.js";
import { SIM_MAX_PODS_PER_NODE, SIM_MAX_ZONES, type SimClusterOptions } from "./options.js";
import { parseCountIn } from "../../../util/parse-count.js";

export interface SimSizeFlagValues {
  workers?: string | undefined;
  zones?: string | undefined;
  "pods-per-node"?: string | undefined;
  "own-kwoks"?: string | undefined;
}

export function simSizeFlags(
  values: SimSizeFlagValues,
): Pick<SimClusterOptions, "workers" | "zones" | "podsPerNode" | "dedicatedKwoks"> {
  const workers =
    values.workers === undefined
      ? undefined
      : parseCountIn("--workers", values.workers, { min: 1, max: SIM_MAX_WORKERS });
  const workerCount = workers ?? 3;
  const zoneMax = Math.min(workerCount, SIM_MAX_ZONES);
  const zones =
    values.zones === undefined
      ? undefined
      : parseCountIn("--zones", values.zones, {
          min: 1,
          max: zoneMax,
          maxIs: zoneMax === workerCount ? "the worker count" : "zones a to z",
        });
  const podsPerNode =
    values["pods-per-node"] === undefined
      ? undefined
      : parseCountIn("--pods-per-node", values["pods-per-node"], { min: 0, max: SIM_MAX_PODS_PER_NODE });
  const dedicatedKwoks =
    values["own-kwoks"] === undefined
      ? undefined
      : parseCountIn("--own-kwoks", values["own-kwoks"], {
          min: 0,
          max: workerCount,
          maxIs: "the worker count",
        });
  return {
    ...(workers === undefined ? {} : { workers }),
    ...(zones === undefined ? {} : { zones }),
    ...(podsPerNode === undefined ? {} : { podsPerNode }),
    ...(dedicatedKwoks === undefined ? {} : { dedicatedKwoks }),
  };
}
