// What a caller may ask of a new sim cluster, its defaults, and their validation.
import { join } from "node:path";
import { RekindleError } from "../../errors.js";
import { stateRoot } from "../../util/paths.js";
import type { Progress } from "../../util/progress.js";
import { TIMING_PROFILES, type TimingProfile } from "../profiles.js";
import type { SimBinaries } from "../../build/sim-binaries.js";

/** Simulated container start and CSI attach latency unless SimClusterOptions say otherwise. */
export const SIM_DEFAULT_LATENCIES = { podStartMs: 1000, attachMs: 500 } as const;

export interface SimClusterOptions {
  /** Cluster name (DNS label). Default "rekindle". Also the default state directory's name. */
  name?: string;
  /** Worker nodes. Default 3. */
  workers?: number;
  /** Zones the workers are spread over, round-robin (zone-a, zone-b, …). Default 2. */
  zones?: number;
  /** Timing profile. Default: the "default" profile (upstream numbers). */
  profile?: TimingProfile;
  /** Directory for state, credentials, etcd data and logs. Default <stateRoot>/sim/<name>. */
  root?: string;
  /** Prebuilt binaries. Default: the build cache, building what is missing. */
  binaries?: SimBinaries;
  /** Simulated container start latency. Default 1000 ms. */
  podStartMs?: number;
  /** Simulated attach latency of the CSI attacher. Default 500 ms. */
  attachMs?: number;
  /**
   * false (default): every process is killed when this Node process exits or is interrupted.
   * true: processes keep running (the CLI's `sim up`); `sim down` stops them.
   */
  detach?: boolean;
  progress?: Progress;
  signal?: AbortSignal;
}

/** The options that shape the cluster, checked and with defaults applied. */
export interface ValidatedSimOptions {
  name: string;
  workers: number;
  zones: number;
  profile: TimingProfile;
  podStartMs: number;
  attachMs: number;
}

const NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/;

export function simClusterRoot(name: string): string {
  return join(stateRoot(), "sim", name);
}

export function zoneName(index: number): string {
  return `zone-${String.fromCharCode("a".charCodeAt(0) + (index % 26))}`;
}

export function validateSimOptions(options: SimClusterOptions): ValidatedSimOptions {
  const name = options.name ?? "rekindle";
  if (!NAME_PATTERN.test(name)) {
    throw RekindleError.invalidInput(
      "cluster name",
      name,
      "a DNS label: lowercase letters, digits and '-', at most 40 characters",
    );
  }
  const workers = options.workers ?? 3;
  if (!Number.isInteger(workers) || workers < 1 || workers > 100) {
    throw RekindleError.invalidInput("worker count", options.workers, "a whole number from 1 to 100");
  }
  const zones = options.zones ?? Math.min(2, workers);
  if (!Number.isInteger(zones) || zones < 1 || zones > workers) {
    throw RekindleError.invalidInput(
      "zone count",
      options.zones,
      `a whole number from 1 to the worker count (${workers})`,
    );
  }
  return {
    name,
    workers,
    zones,
    profile: options.profile ?? TIMING_PROFILES.default,
    podStartMs: options.podStartMs ?? SIM_DEFAULT_LATENCIES.podStartMs,
    attachMs: options.attachMs ?? SIM_DEFAULT_LATENCIES.attachMs,
  };
}
