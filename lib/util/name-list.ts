// Names in a progress line or an error: every one while few, else the first and last few and a
// count, so a step over 997 nodes of a fleet stays one readable line.

/** Names listed in full up to this many; past it, the first three, "…", the last two and the count. */
export const NAME_LIST_MAX = 8;

/** "worker-1, worker-2" or "worker-1, worker-2, worker-3, …, worker-999, worker-1000 (997 nodes)". */
export function nameList(names: readonly string[], noun = "nodes", max = NAME_LIST_MAX): string {
  // The short form shows five names: shortening six or fewer would hide none.
  if (names.length <= Math.max(max, 6)) return names.join(", ");
  return `${[...names.slice(0, 3), "…", ...names.slice(-2)].join(", ")} (${names.length} ${noun})`;
}
