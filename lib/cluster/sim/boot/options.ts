// What a caller may ask of a new sim cluster, its defaults, and their validation.
import { join } from "node:path";
import { RekindleError } from "../../../errors.js";
import { stateRoot } from "../../../util/paths.js";
import type { Progress } from "../../../util/progress.js";
import { TIMING_PROFILES, type TimingProfile } from "../../profiles.js";
import type { SimBinaries } from "../../../build/sim-binaries.js";
import { worstAttachSeenMs } from "../../kubelet-volume-timing.js";
import type { EvictionSettings, ProviderLatencies } from "../../provider.js";
import { SIM_MAX_WORKERS } from "./addresses.js";

/** Zones are named zone-a … zone-z. */
export const SIM_MAX_ZONES = 26;
/** The longest simulated latency a caller may ask for (a minute). */
const MAX_LATENCY_MS = 60_000;
/** Up to this many workers, every worker has its own kwok by default (the layout of every suite). */
export const SIM_DEDICATED_UP_TO = 100;
/** Above SIM_DEDICATED_UP_TO workers, this many (the first) keep their own kwok by default. */
export const SIM_DEFAULT_DEDICATED_AT_SCALE = 3;
/** The most nodes one shared kwok plays unless SimClusterOptions say otherwise. */
export const SIM_DEFAULT_NODES_PER_KWOK = 500;
/** Filler pods per fleet node: at most what a node holds (110) less room for DaemonSet pods. */
export const SIM_MAX_PODS_PER_NODE = 100;

/**
 * Simulated container start (at least podStartMs, at most podStartSpreadMs more, drawn per pod) and
 * CSI attach latency unless SimClusterOptions say otherwise. Container start as kind's containerd
 * measured it (fast profile, 5 runs of each scenario, 2026-11-26): a replacement pod ran 0.6–1.4 s
 * after it was created for the Deployment, 0.9–1.8 s for the StatefulSet without a volume
 * (docs/calibration.md).
 */
export const SIM_DEFAULT_LATENCIES = { podStartMs: 800, podStartSpreadMs: 600, attachMs: 500 } as const;

/**
 * The latencies the expected timelines assume on a sim of the default latencies whose kubelets
 * write their status every `statusUpdateIntervalMs`: a mount waits for that write, then for the
 * kubelet's next check (kubelet/volumes.ts).
 */
export function simProviderLatencies(
  kubelet: Pick<EvictionSettings, "statusUpdateIntervalMs">,
): ProviderLatencies {
  const { podStartMs, attachMs } = SIM_DEFAULT_LATENCIES;
  return { podStartMs, attachMs, attachSeenMs: worstAttachSeenMs(kubelet.statusUpdateIntervalMs) };
}

export interface SimClusterOptions {
  /** Cluster name (DNS label). Default "rekindle". Also the default state directory's name. */
  name?: string;
  /** Worker nodes, 1 to SIM_MAX_WORKERS (1000). Default 3. */
  workers?: number;
  /** Zones the workers are spread over, round-robin (zone-a, zone-b, …), at most 26. Default 2. */
  zones?: number;
  /**
   * How many workers, from worker-1 on, run their own kwok (lost by SIGKILL, partitioned by
   * SIGSTOP); the rest are "fleet" workers in shared kwoks, one per zone or per
   * `nodesPerKwok` of a zone (kubelet/kwok-groups.ts). Default: every worker up to 100 workers, else 3.
   */
  dedicatedKwoks?: number;
  /** The most fleet workers one shared kwok plays. Default 500. */
  nodesPerKwok?: number;
  /** Filler pods per fleet worker (filler.ts), 0 to 100, so the API holds a realistic object count. Default 0. */
  podsPerNode?: number;
  /** Timing profile. Default: the "default" profile (upstream numbers). */
  profile?: TimingProfile;
  /** Directory for state, credentials, etcd data and logs. Default <stateRoot>/sim/<name>. */
  root?: string;
  /** Prebuilt binaries. Default: the build cache, building what is missing. */
  binaries?: SimBinaries;
  /** Simulated container start latency, the least a pod's containers take. Default SIM_DEFAULT_LATENCIES. */
  podStartMs?: number;
  /**
   * How much longer than podStartMs a container start may take, drawn uniformly per pod (0: always
   * podStartMs). Default SIM_DEFAULT_LATENCIES. The expected timelines allow 1 s after podStartMs.
   */
  podStartSpreadMs?: number;
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
  dedicatedKwoks: number;
  nodesPerKwok: number;
  podsPerNode: number;
  profile: TimingProfile;
  podStartMs: number;
  podStartSpreadMs: number;
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
  wholeNumber("worker count", workers, 1, SIM_MAX_WORKERS);
  const zones = options.zones ?? Math.min(2, workers);
  wholeNumber(
    "zone count",
    zones,
    1,
    Math.min(workers, SIM_MAX_ZONES),
    "the worker count or 26, whichever is less",
  );
  const dedicatedKwoks =
    options.dedicatedKwoks ??
    (workers <= SIM_DEDICATED_UP_TO ? workers : Math.min(workers, SIM_DEFAULT_DEDICATED_AT_SCALE));
  wholeNumber("count of workers with their own kwok", dedicatedKwoks, 0, workers, "the worker count");
  const nodesPerKwok = options.nodesPerKwok ?? SIM_DEFAULT_NODES_PER_KWOK;
  wholeNumber("nodes per shared kwok", nodesPerKwok, 1, SIM_MAX_WORKERS);
  const podsPerNode = options.podsPerNode ?? 0;
  wholeNumber("filler pods per node", podsPerNode, 0, SIM_MAX_PODS_PER_NODE);
  const podStartMs = options.podStartMs ?? SIM_DEFAULT_LATENCIES.podStartMs;
  wholeNumber("container start (ms)", podStartMs, 0, MAX_LATENCY_MS);
  const podStartSpreadMs = options.podStartSpreadMs ?? SIM_DEFAULT_LATENCIES.podStartSpreadMs;
  wholeNumber("container start spread (ms)", podStartSpreadMs, 0, MAX_LATENCY_MS);
  return {
    name,
    workers,
    zones,
    dedicatedKwoks,
    nodesPerKwok,
    podsPerNode,
    profile: options.profile ?? TIMING_PROFILES.default,
    podStartMs,
    podStartSpreadMs,
    attachMs: options.attachMs ?? SIM_DEFAULT_LATENCIES.attachMs,
  };
}

/** Refuses a value that is not a whole number in [min, max], naming the setting and the range. */
export function wholeNumber(
  what: string,
  value: number,
  min: number,
  max: number,
  maxText = String(max),
): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw RekindleError.invalidInput(what, value, `a whole number from ${min} to ${maxText} (${max})`);
  }
}
