// `rekindle run --parallel N|auto`: how many sim clusters run the selection side by side. `auto`
// is sized from what one fast-profile sim cluster (3 workers) and the rekindle process driving it
// were measured to use on the 2-core development machine (docs/measurements.md, run-*.json):
// their average CPU over a whole run and the peak RSS of all its processes; and from the
// selection itself, which gains nothing from more clusters than its longest scenario allows.
import { availableParallelism, freemem } from "node:os";
import { RekindleError } from "../errors.js";
import type { ProviderName } from "../cluster/provider.js";

/** The most clusters `--parallel` starts (each holds a control plane: more is a typo on any machine we know). */
export const MAX_PARALLEL = 16;

/** `--parallel`'s value: a number of clusters, or "auto". */
export type ParallelChoice = number | "auto";

/** Parses `--parallel N|auto`; anything else is bad input naming what is valid. */
export function parseParallel(text: string): ParallelChoice {
  const trimmed = text.trim();
  if (trimmed === "auto") return "auto";
  const count = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || count < 1 || count > MAX_PARALLEL)
    throw new RekindleError("INVALID_INPUT", `--parallel ${JSON.stringify(text)} is not a cluster count`, {
      hint: `--parallel takes a whole number of sim clusters from 1 to ${MAX_PARALLEL}, or auto (chosen from cores, free memory and the selection's lengths)`,
      details: { got: text },
    });
  return count;
}

/** `--parallel` runs sim clusters it starts itself; any other provider is refused before anything starts. */
export function checkParallelProvider(provider: string | undefined, choice: ParallelChoice): void {
  if (provider === "sim") return;
  const given =
    provider === undefined ? "no --provider (kind is chosen when it answers)" : `--provider ${provider}`;
  throw new RekindleError(
    "INVALID_INPUT",
    `--parallel ${String(choice)} needs --provider sim, got ${given}`,
    {
      hint: "--parallel starts one sim cluster per slot: pass --provider sim, or drop --parallel (kind and existing run one cluster; split those over a CI matrix with --shard k/n)",
      details: { provider: provider ?? null, valid: ["sim" satisfies ProviderName] },
    },
  );
}

/** The layout when --parallel was not given: side by side on the sim unless the cluster is kept. */
export function defaultLayout(provider: ProviderName, keepCluster: boolean): ParallelChoice {
  return provider === "sim" && !keepCluster ? "auto" : 1;
}

/** What one fast-profile sim cluster with its rekindle process was measured to use (docs/measurements.md). */
export const CLUSTER_COST = {
  /**
   * Cores on average over a whole run: the fast run, every family, on 5 clusters took 0.56 of the
   * machine's 2 cores in all (bench/results/run-fast-parallel-5-2026-11-25.json), 0.11 a cluster;
   * planned with a third more. A cluster mostly waits on the cluster's own timers.
   */
  cores: 0.15,
  /** Peak RSS of the control plane, KWOK, helpers and the rekindle process (measured 1.02 GB), with 15 % margin. */
  memoryBytes: 1.1 * 1024 ** 3,
};

/**
 * Share of the cores `auto` fills with the clusters' average use. The rest is for bursts: the
 * clusters all boot together (5 at once were each ready in 11-12.5 s, which only delays the
 * first scenarios) and a scenario's busiest 5 s took 0.33 of a core. Measured whole runs with 5
 * clusters at once used 0.56-0.76 of 2 cores on average (bench/results/run-*-2026-11-2[56].json):
 * at 0.45, 2 cores take 6 clusters, about 0.9 of a core on average, with 1.1 left for bursts.
 */
export const CORE_SHARE = 0.45;

/** Memory `auto` leaves free for everything else, bytes. */
export const MEMORY_RESERVE_BYTES = 2 * 1024 ** 3;

export interface MachineFacts {
  cores: number;
  freeMemoryBytes: number;
}

export function machineFacts(): MachineFacts {
  return { cores: availableParallelism(), freeMemoryBytes: freemem() };
}

/**
 * Clusters past the selection's total expected length over its longest cannot end the run
 * sooner: the longest scenario runs on one cluster whatever the others do.
 */
export function clustersNeeded(expectedMs: readonly number[]): number {
  const longest = Math.max(0, ...expectedMs);
  if (longest === 0) return expectedMs.length;
  return Math.ceil(expectedMs.reduce((sum, ms) => sum + ms, 0) / longest);
}

/** The cluster count `auto` chooses, and why (the deciding limits), for the selected scenarios' expected lengths. */
export function autoParallel(
  machine: MachineFacts,
  expectedMs: readonly number[],
): { clusters: number; why: string } {
  const selected = expectedMs.length;
  const byCores = Math.floor((machine.cores * CORE_SHARE) / CLUSTER_COST.cores);
  const byMemory = Math.floor((machine.freeMemoryBytes - MEMORY_RESERVE_BYTES) / CLUSTER_COST.memoryBytes);
  const byNeed = clustersNeeded(expectedMs);
  const clusters = Math.max(1, Math.min(byCores, byMemory, byNeed, selected, MAX_PARALLEL));
  const gib = (b: number) => `${(b / 1024 ** 3).toFixed(1)} GiB`;
  const why = [
    `auto: ${machine.cores} cores × ${CORE_SHARE} / ${CLUSTER_COST.cores} core per cluster = ${byCores}`,
    `(${gib(machine.freeMemoryBytes)} free − ${gib(MEMORY_RESERVE_BYTES)}) / ${gib(CLUSTER_COST.memoryBytes)} per cluster = ${byMemory}`,
    `the selection's expected lengths over its longest = ${byNeed}`,
    ...(selected < Math.min(byCores, byMemory, byNeed) ? [`only ${selected} scenario(s)`] : []),
  ].join("; ");
  return { clusters, why };
}

/** The clusters a run starts: never more than it has scenarios (an idle cluster only costs its boot). */
export function clusterCount(
  choice: ParallelChoice,
  expectedMs: readonly number[],
  machine: MachineFacts = machineFacts(),
): { clusters: number; why: string } {
  const selected = expectedMs.length;
  if (choice === "auto") return autoParallel(machine, expectedMs);
  const clusters = Math.max(1, Math.min(choice, selected));
  return {
    clusters,
    why:
      clusters < choice ? `--parallel ${choice}, but only ${selected} scenario(s)` : `--parallel ${choice}`,
  };
}
