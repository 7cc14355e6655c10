// `rekindle run --parallel N|auto`: how many sim clusters run the selection side by side. `auto`
// is sized from what one fast-profile sim cluster (3 workers) and the rekindle process driving it
// were measured to use on the 2-core development machine (docs/user.md, "Scenarios side by side"):
// the busiest 5 s of a node-loss scenario and the peak RSS of all its processes.
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
      hint: `--parallel takes a whole number of sim clusters from 1 to ${MAX_PARALLEL}, or auto (chosen from cores and free memory)`,
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

/** What one fast-profile sim cluster with its rekindle process was measured to use (docs/user.md). */
export const CLUSTER_COST = {
  /** Cores in the busiest 5 s of a scenario (measured 0.33; 0.12-0.16 while a scenario waits). */
  cores: 0.35,
  /** Peak RSS of the control plane, KWOK, helpers and the rekindle process (measured 1.02 GB), with 15 % margin. */
  memoryBytes: 1.1 * 1024 ** 3,
};

/**
 * Share of the cores `auto` fills with the clusters' busiest use. A cluster's boot took 0.86 of a
 * core, 2.6 times its busiest scenario: with 0.4 of the cores planned, every cluster can burst like
 * that at once (they all boot together) without a window missed for want of CPU.
 */
export const CORE_SHARE = 0.4;

/** Memory `auto` leaves free for everything else, bytes. */
export const MEMORY_RESERVE_BYTES = 2 * 1024 ** 3;

export interface MachineFacts {
  cores: number;
  freeMemoryBytes: number;
}

export function machineFacts(): MachineFacts {
  return { cores: availableParallelism(), freeMemoryBytes: freemem() };
}

/** The cluster count `auto` chooses, and why (the deciding limit), for `selected` scenarios. */
export function autoParallel(machine: MachineFacts, selected: number): { clusters: number; why: string } {
  const byCores = Math.floor((machine.cores * CORE_SHARE) / CLUSTER_COST.cores);
  const byMemory = Math.floor((machine.freeMemoryBytes - MEMORY_RESERVE_BYTES) / CLUSTER_COST.memoryBytes);
  const clusters = Math.max(1, Math.min(byCores, byMemory, selected, MAX_PARALLEL));
  const gib = (b: number) => `${(b / 1024 ** 3).toFixed(1)} GiB`;
  const why = `auto: ${machine.cores} cores × ${CORE_SHARE} / ${CLUSTER_COST.cores} core per cluster = ${byCores}; (${gib(machine.freeMemoryBytes)} free − ${gib(MEMORY_RESERVE_BYTES)}) / ${gib(CLUSTER_COST.memoryBytes)} per cluster = ${byMemory}${selected < Math.min(byCores, byMemory) ? `; only ${selected} scenario(s)` : ""}`;
  return { clusters, why };
}

/** The clusters a run starts: never more than it has scenarios (an idle cluster only costs its boot). */
export function clusterCount(
  choice: ParallelChoice,
  selected: number,
  machine: MachineFacts = machineFacts(),
): { clusters: number; why: string } {
  if (choice === "auto") return autoParallel(machine, selected);
  const clusters = Math.max(1, Math.min(choice, selected));
  return {
    clusters,
    why:
      clusters < choice ? `--parallel ${choice}, but only ${selected} scenario(s)` : `--parallel ${choice}`,
  };
}
