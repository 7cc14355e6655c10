// How `npm run test:integration` splits its files: the files that share the gate's families run
// (test/support/gate-sim-run.ts, one `rekindle run` of six or more clusters that fills the machine)
// run first with nothing beside them; the rest run in shards side by side, balanced by each file's
// wall time in the last recorded gate. Files that build real kind clusters share a shard: kind
// raises the host's inotify limits for its nodes and puts them back when its cluster goes, which
// would pull them from under another shard's cluster.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface ShardPlan {
  /** Run first, alone: the files that await the shared families run. */
  alone: string[];
  /** Then these side by side, one mocha process each; every file is in exactly one. */
  shards: string[][];
}

export interface ShardPlanInputs {
  /** The files, relative to the project (test/integration/x.test.ts). */
  files: string[];
  /** A file's source text: decides its group. */
  sourceOf: (file: string) => string;
  /** Seconds a file took in the last recorded gate; a file not in it weighs the median. */
  seconds: ReadonlyMap<string, number>;
  /** How many shards run side by side (1: one after another, as a single mocha run). */
  shardCount: number;
}

const SHARES_FAMILIES_RUN = /gate-sim-run/;
const BUILDS_KIND_CLUSTERS = /startKindCluster|kind-run\.js/;

/** Splits `files` as the header says: heaviest unit first onto the lightest shard. */
export function planShards(inputs: ShardPlanInputs): ShardPlan {
  const { files, sourceOf, seconds, shardCount } = inputs;
  if (!Number.isInteger(shardCount) || shardCount < 1)
    throw new Error(`shard count must be a whole number of at least 1, not ${String(shardCount)}`);
  const sorted = [...files].sort();
  const alone = sorted.filter((f) => SHARES_FAMILIES_RUN.test(sourceOf(f)));
  const rest = sorted.filter((f) => !alone.includes(f));
  const kind = rest.filter((f) => BUILDS_KIND_CLUSTERS.test(sourceOf(f)));
  const known = [...seconds.values()].sort((a, b) => a - b);
  const median = known.length === 0 ? 1 : (known[Math.floor(known.length / 2)] ?? 1);
  const weight = (f: string): number => seconds.get(f) ?? median;
  const units: { files: string[]; weight: number }[] = [
    ...(kind.length > 0 ? [{ files: kind, weight: kind.reduce((s, f) => s + weight(f), 0) }] : []),
    ...rest.filter((f) => !kind.includes(f)).map((f) => ({ files: [f], weight: weight(f) })),
  ].sort((a, b) => b.weight - a.weight || (a.files[0] ?? "").localeCompare(b.files[0] ?? ""));
  const shards = Array.from({ length: shardCount }, () => ({ files: [] as string[], weight: 0 }));
  for (const unit of units) {
    const lightest = shards.reduce((min, s) => (s.weight < min.weight ? s : min));
    lightest.files.push(...unit.files);
    lightest.weight += unit.weight;
  }
  return { alone, shards: shards.map((s) => s.files).filter((s) => s.length > 0) };
}

interface GateResultsFile {
  date?: string;
  rows?: { files?: { integration?: { file: string; ms: number }[] } }[];
}

/**
 * Each integration file's seconds in the newest bench/results/gate-*.json that has them (by its
 * `date`, then its name); empty when there is none.
 */
export function lastGateSeconds(resultsDir: string): Map<string, number> {
  let names: string[];
  try {
    names = readdirSync(resultsDir).filter((n) => /^gate-.*\.json$/.test(n));
  } catch {
    return new Map();
  }
  const candidates = names
    .map((name) => {
      try {
        return { name, body: JSON.parse(readFileSync(join(resultsDir, name), "utf8")) as GateResultsFile };
      } catch {
        return undefined;
      }
    })
    .filter((c) => c !== undefined)
    .map((c) => ({ ...c, rows: c.body.rows?.find((r) => r.files?.integration)?.files?.integration }))
    .filter((c) => c.rows !== undefined && c.rows.length > 0)
    .sort((a, b) => (a.body.date ?? "").localeCompare(b.body.date ?? "") || a.name.localeCompare(b.name));
  const newest = candidates.at(-1)?.rows ?? [];
  return new Map(newest.map((r) => [r.file, r.ms / 1000]));
}
