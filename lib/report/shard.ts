// `rekindle run --shard k/n`: which of the selected scenarios shard k of n runs. The selection (the
// scenario ids the run's --suite/-f/--scenario choose) is sorted by id and dealt round-robin: the
// scenario at sorted position i goes to shard (i mod n) + 1. So a scenario's shard depends only on
// the selection and n, never on the provider, the machine or the order of the flags; shard sizes
// differ by at most one; and a family's scenarios spread over the shards instead of filling one.
// (A hash of the id would keep a scenario's shard when others join the selection, but leaves
// shards of a 27-scenario run anywhere from 3 to 11 long; every shard of one CI matrix runs the
// same commit and flags, which the selection's sha256 lets `rekindle merge` check.)
import { createHash } from "node:crypto";
import { RekindleError } from "../errors.js";
import type { HostFacts } from "./environment.js";
import type { RunError } from "./run-error.js";

/** Shard `index` (1-based) of `count`. */
export interface ShardSpec {
  index: number;
  count: number;
}

/** summary.json's `shard`: what a run with --shard ran, and of what. */
export interface ShardRecord extends ShardSpec {
  /** How many scenarios the whole selection holds (every shard's together). */
  selected: number;
  /** sha256 of the whole selection's ids, sorted, one per line: equal on every shard of one matrix. */
  selectionSha256: string;
  /** This shard's share of the selection, sorted by id (empty: nothing to run). */
  scenarios: string[];
}

/** The most shards a run may be split into (a CI matrix of more is a typo). */
export const MAX_SHARDS = 256;

const SHARD_FORMS = `k/n with whole numbers 1 ≤ k ≤ n ≤ ${MAX_SHARDS}, e.g. 2/4`;

/** Parses `--shard k/n`; anything else is bad input saying what would be valid. */
export function parseShard(text: string): ShardSpec {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (match === null || index < 1 || count < 1 || index > count || count > MAX_SHARDS)
    throw new RekindleError("INVALID_INPUT", `--shard ${JSON.stringify(text)} is not a shard`, {
      hint: `--shard takes ${SHARD_FORMS}: shard k of n`,
      details: { got: text },
    });
  return { index, count };
}

/** The selection's ids, each once, sorted (code-point order, the same on every machine). */
export function sortedSelection(ids: readonly string[]): string[] {
  return [...new Set(ids)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** sha256 of the sorted selection, one id per line. */
export function selectionSha256(ids: readonly string[]): string {
  return createHash("sha256").update(sortedSelection(ids).join("\n")).digest("hex");
}

/** The shard (1-based) each id of the selection goes to. */
export function shardAssignment(ids: readonly string[], count: number): Map<string, number> {
  return new Map(sortedSelection(ids).map((id, i) => [id, (i % count) + 1]));
}

/** What shard `spec` of the selection `ids` runs, as summary.json records it. */
export function shardRecord(ids: readonly string[], spec: ShardSpec): ShardRecord {
  const assignment = shardAssignment(ids, spec.count);
  return {
    index: spec.index,
    count: spec.count,
    selected: assignment.size,
    selectionSha256: selectionSha256(ids),
    scenarios: [...assignment].filter(([, shard]) => shard === spec.index).map(([id]) => id),
  };
}

/** "2/4". */
export function shardLabel(spec: ShardSpec): string {
  return `${spec.index}/${spec.count}`;
}

/** One shard a merged summary came from (summary.json's `merged.shards`). */
export interface MergedShard {
  index: number;
  /** The file it was read from, as given to `rekindle merge`. */
  source: string;
  runId: string;
  startedAt: string;
  finishedAt?: string;
  /** Its share of the selection (what it was to run). */
  scenarios: string[];
  /** Its harness error (null: it did its job). */
  error: RunError | null;
  /** The machine it ran on. */
  host?: HostFacts;
  /** Facts of its environment (top-level keys) that differ from the merged summary's environment. */
  environmentDiffers: string[];
}

/** summary.json's `merged`: the shards `rekindle merge` joined into this summary. */
export interface MergedRecord {
  count: number;
  selected: number;
  selectionSha256: string;
  /** Every shard, by index. */
  shards: MergedShard[];
}
