// `rekindle run --parallel`: which of the N clusters are sized for the scenarios that need more
// workers than the default layout (3 workers in 2 zones). A serial run of a mixed selection keeps
// the default layout and skips those (sim-size.ts: the others' budgets and zones assume it); with
// several clusters some can be sized for them instead, so the whole selection runs. Pure.
import { needsSizedCluster, type ClusterKind, type QueuedScenario } from "./parallel-queue.js";

/** One cluster's size: what it takes from the queue, and its workers (undefined: the default 3). */
export interface SlotSize {
  kind: ClusterKind;
  workers?: number;
}

export interface SlotSizes {
  slots: SlotSize[];
  /** For the progress line: how the sizes were chosen; undefined when every cluster is alike. */
  why?: string;
}

/** When the last of `lengths` ends on `clusters` clusters, each taking the longest left when free. */
export function makespanMs(lengths: readonly number[], clusters: number): number {
  const ends = Array.from({ length: Math.max(1, clusters) }, () => 0);
  for (const length of [...lengths].sort((a, b) => b - a)) {
    const first = ends.indexOf(Math.min(...ends));
    ends[first] = (ends[first] ?? 0) + length;
  }
  return Math.max(...ends);
}

/**
 * The sizes of `clusters` clusters for `selection`: with both kinds of scenario and two clusters or
 * more, as many clusters sized for the ones that need more workers (each with the most any of them
 * needs) as makes the whole selection end soonest by its expected lengths, the fewest of equal
 * ends (a larger cluster costs more); at least one of each kind, at most one per sized scenario.
 */
export function slotSizes(selection: readonly QueuedScenario[], clusters: number): SlotSizes {
  const sized = selection.filter(needsSizedCluster);
  const workers = Math.max(0, ...sized.map((s) => s.workers ?? 0));
  const alike = (size: SlotSize): SlotSize[] => Array.from({ length: clusters }, () => ({ ...size }));
  if (sized.length === 0) return { slots: alike({ kind: "any" }) };
  if (sized.length === selection.length) return { slots: alike({ kind: "any", workers }) };
  if (clusters < 2)
    return {
      slots: alike({ kind: "any" }),
      why: `one cluster of the default size: the ${sized.length} scenario(s) needing ${workers} workers skip`,
    };
  const sizedLengths = sized.map((s) => s.expectedMs);
  const otherLengths = selection.filter((s) => !needsSizedCluster(s)).map((s) => s.expectedMs);
  let count = 1;
  let best = Infinity;
  for (let k = 1; k <= Math.min(sized.length, clusters - 1); k++) {
    const end = Math.max(makespanMs(sizedLengths, k), makespanMs(otherLengths, clusters - k));
    if (end < best) [count, best] = [k, end];
  }
  return {
    slots: [
      ...Array.from({ length: clusters - count }, (): SlotSize => ({ kind: "default" })),
      ...Array.from({ length: count }, (): SlotSize => ({ kind: "sized", workers })),
    ],
    why: `${count} of them with ${workers} workers for the ${sized.length} scenario(s) that need more than 3`,
  };
}
