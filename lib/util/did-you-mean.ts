// The known word a mistyped one most likely meant: a unique prefix match first, else the closest
// by edit distance within a third of the word's length (so `--nodes-selecter` finds
// `--node-selector`, and `--bogus` finds nothing).

/**
 * Edit distance between `a` and `b` (optimal string alignment): an insertion, a deletion, a
 * substitution or a swap of two neighbours each cost 1, so `rnu` is 1 from `run`.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const above = rows[i - 1] ?? [];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((above[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (above[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      row.push(best);
    }
    rows.push(row);
  }
  return rows[a.length]?.[b.length] ?? 0;
}

/** The shortest word that is a prefix match of 2 characters or more counts as a match. */
const MIN_PREFIX_CHARS = 2;

/**
 * The word of `known` closest to `typed`, or undefined when none is close: among the words `typed`
 * begins (at least 2 characters), the nearest; else the nearest within max(1, ⌊length/3⌋) edits.
 * Ties go to the earlier word of `known`.
 */
export function didYouMean(typed: string, known: readonly string[]): string | undefined {
  const candidates = known.filter((word) => word !== typed);
  const nearest = (words: readonly string[]): string | undefined => {
    let best: { word: string; distance: number } | undefined;
    for (const word of words) {
      const distance = editDistance(typed, word);
      if (best === undefined || distance < best.distance) best = { word, distance };
    }
    return best?.word;
  };
  if (typed.length >= MIN_PREFIX_CHARS) {
    const prefixed = candidates.filter((word) => word.startsWith(typed));
    if (prefixed.length > 0) return nearest(prefixed);
  }
  const within = Math.max(1, Math.floor(typed.length / 3));
  return nearest(candidates.filter((word) => editDistance(typed, word) <= within));
}
