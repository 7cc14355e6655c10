// `rekindle merge`: the summaries of the shards of one CI matrix (`rekindle run --shard k/n`)
// joined into the summary one serial run of the whole selection would have written. Inputs that do
// not make one run are refused (INVALID_INPUT, exit 2), naming the file and the reason:
// - refused: a file that cannot be read, is not JSON, does not conform to docs/summary.schema.json,
//   or was not run with --shard; shards of different counts n or different selections (other
//   --suite/-f/--scenario, or another rekindle); a shard given twice, a shard missing; a scenario in
//   two shards, or one a shard ran outside its share; different provider, profile, knob values
//   (environment.timing), repeat count, schema version, rekindle version or git sha — their numbers
//   are not one run's.
// - recorded (merged.shards[].environmentDiffers, and a warning): what may differ between the
//   machines of a matrix — Kubernetes and image versions read from the cluster, knob sources, whether
//   the tree was dirty; the host is recorded per shard, and the cluster's description (it names each
//   run's own cluster) is not compared.
// The merged summary is a function of its inputs alone (no clock, no random id): merging the same
// files again gives the same bytes, so the sign-off's sha256 can be checked by anyone holding them.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { RekindleError } from "../errors.js";
import type { RunEnvironment } from "./environment.js";
import { type MergedShard, shardLabel, type ShardRecord } from "./shard.js";
import { summaryPathOf } from "./summary-file.js";
import { summarySchemaErrors } from "./summary-schema.js";
import type { RunError } from "./run-error.js";
import type { RunSummary } from "./summary-types.js";

/** A shard's summary with the file it came from. */
export interface ShardSummary {
  path: string;
  summary: RunSummary & { shard: ShardRecord };
}

const MERGE_HINT =
  "pass the summary.json (or report directory) of every shard of one CI matrix: the same commit, flags and --shard count, each k from 1 to n once";

function refuse(message: string, details: Record<string, unknown> = {}): RekindleError {
  return new RekindleError("INVALID_INPUT", message, { hint: MERGE_HINT, details });
}

/** Reads one shard's summary: readable, JSON, valid against the schema, and run with --shard. */
export function readShardSummary(given: string): ShardSummary {
  const path = summaryPathOf(given);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw refuse(`cannot merge ${path}: ${why}`, { path });
  }
  const problems = summarySchemaErrors(parsed);
  if (problems.length > 0) {
    const shown = problems.slice(0, 3).join("; ");
    const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : "";
    throw refuse(`cannot merge ${path}: not valid against docs/summary.schema.json: ${shown}${more}`, {
      path,
      problems,
    });
  }
  const summary = parsed as RunSummary;
  if (summary.shard === undefined)
    throw refuse(
      `cannot merge ${path}: it was not run with --shard (${summary.merged !== undefined ? "a merged summary" : "a whole run"})`,
      { path },
    );
  return { path, summary: summary as ShardSummary["summary"] };
}

/** A field every shard must share, with a reader and what a difference means. */
interface SharedField {
  name: string;
  read: (s: ShardSummary["summary"]) => unknown;
}

const SHARED: readonly SharedField[] = [
  { name: "schemaVersion", read: (s) => s.schemaVersion },
  { name: "shard count n", read: (s) => s.shard.count },
  { name: "selection (its sha256)", read: (s) => s.shard.selectionSha256 },
  { name: "provider", read: (s) => s.provider },
  { name: "profile", read: (s) => s.profile },
  { name: "knob values (environment.timing)", read: (s) => s.environment?.timing },
  { name: "repeat", read: (s) => s.repeat },
  { name: "rekindle version", read: (s) => s.environment?.rekindle.version },
  { name: "git sha", read: (s) => s.environment?.rekindle.gitSha },
];

function shown(value: unknown): string {
  const text = value === undefined ? "absent" : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

/** Refuses shards that do not agree on a SHARED field, naming both files and values. */
function checkShared(shards: readonly ShardSummary[]): void {
  const [first, ...rest] = shards;
  if (first === undefined) return;
  for (const field of SHARED) {
    const want = JSON.stringify(field.read(first.summary));
    const other = rest.find((s) => JSON.stringify(field.read(s.summary)) !== want);
    if (other !== undefined)
      throw refuse(
        `cannot merge ${other.path}: its ${field.name} ${shown(field.read(other.summary))} differs from ${first.path}'s ${shown(field.read(first.summary))}`,
        { path: other.path, field: field.name },
      );
  }
}

/** Each shard 1..n exactly once; each scenario in one shard's share, and run only by that shard. */
function checkCoverage(shards: readonly ShardSummary[]): void {
  const byIndex = new Map<number, ShardSummary>();
  for (const shard of shards) {
    const twin = byIndex.get(shard.summary.shard.index);
    if (twin !== undefined)
      throw refuse(
        `cannot merge ${shard.path}: shard ${shardLabel(shard.summary.shard)} is given twice (${twin.path} and ${shard.path})`,
        { path: shard.path },
      );
    byIndex.set(shard.summary.shard.index, shard);
  }
  const count = shards[0]?.summary.shard.count ?? 0;
  const missing = [...Array(count).keys()].map((i) => i + 1).filter((i) => !byIndex.has(i));
  if (missing.length > 0)
    throw refuse(
      `cannot merge: shard${missing.length > 1 ? "s" : ""} ${missing.map((i) => `${i}/${count}`).join(", ")} missing (given: ${shards.map((s) => `${s.path} as ${shardLabel(s.summary.shard)}`).join(", ")})`,
      { missing },
    );
  const owner = new Map<string, string>();
  for (const { path, summary } of shards) {
    for (const id of summary.shard.scenarios) {
      const other = owner.get(id);
      if (other !== undefined)
        throw refuse(`cannot merge ${path}: scenario ${id} is in its share and in ${other}'s`, { path, id });
      owner.set(id, path);
    }
    const share = new Set(summary.shard.scenarios);
    const ran = [...summary.scenarios.map((s) => s.id), ...(summary.skipped ?? []).map((s) => s.id)];
    const outside = ran.find((id) => !share.has(id));
    if (outside !== undefined)
      throw refuse(
        `cannot merge ${path}: it reports scenario ${outside}, which is not in its share as shard ${shardLabel(summary.shard)}${owner.has(outside) && owner.get(outside) !== path ? ` (it is ${owner.get(outside) ?? ""}'s)` : ""}`,
        { path, id: outside },
      );
  }
  const total = shards.reduce((n, s) => n + s.summary.shard.scenarios.length, 0);
  const selected = shards[0]?.summary.shard.selected ?? 0;
  if (total !== selected)
    throw refuse(`cannot merge: the shards' shares hold ${total} scenarios, their selection ${selected}`, {
      total,
      selected,
    });
}

function byId<T extends { id: string }>(a: T, b: T): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Environment facts that differ on every shard by nature: each machine, each run's own cluster name. */
const PER_SHARD_FACTS = ["host", "cluster"];

/** The environment keys (PER_SHARD_FACTS aside) in which `env` differs from `base`. */
function differences(base: RunEnvironment | undefined, env: RunEnvironment | undefined): string[] {
  if (base === undefined || env === undefined) return base === env ? [] : ["environment"];
  const keys = new Set([...Object.keys(base), ...Object.keys(env)]);
  for (const key of PER_SHARD_FACTS) keys.delete(key);
  const a = base as unknown as Record<string, unknown>;
  const b = env as unknown as Record<string, unknown>;
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}

/** The merged run's error: none, or the first broken shard's, saying which shards broke. */
function mergedError(shards: readonly ShardSummary[]): RunError | null {
  const broken = shards.filter((s) => s.summary.error != null);
  const first = broken[0]?.summary;
  if (first?.error == null) return null;
  const others =
    broken.length > 1
      ? ` (also shards ${broken
          .slice(1)
          .map((s) => shardLabel(s.summary.shard))
          .join(", ")})`
      : "";
  return { ...first.error, message: `shard ${shardLabel(first.shard)}${others}: ${first.error.message}` };
}

export interface MergeResult {
  summary: RunSummary;
  /** One line per shard whose environment differs from the merged summary's (recorded, not refused). */
  warnings: string[];
}

/**
 * Joins the shards' summaries (each read by readShardSummary) into one, refusing inputs that are not
 * one matrix's shards. The environment is the first shard's that brought a cluster up (shard 1's
 * when none did); scenarios and skips are sorted by id.
 */
export function mergeShardSummaries(given: readonly ShardSummary[]): MergeResult {
  if (given.length === 0) throw refuse("rekindle merge needs the summary of every shard, got none");
  checkShared(given);
  checkCoverage(given);
  const shards = [...given].sort((a, b) => a.summary.shard.index - b.summary.shard.index);
  const base = (shards.find((s) => s.summary.environment?.cluster != null) ?? shards[0])?.summary;
  if (base === undefined) throw refuse("rekindle merge needs the summary of every shard, got none");
  const records: MergedShard[] = shards.map(({ path, summary: s }) => ({
    index: s.shard.index,
    source: path,
    runId: s.runId,
    startedAt: s.startedAt,
    ...(s.finishedAt !== undefined ? { finishedAt: s.finishedAt } : {}),
    scenarios: s.shard.scenarios,
    error: s.error ?? null,
    ...(s.environment !== undefined ? { host: s.environment.host } : {}),
    // A shard that brought no cluster up (nothing to run, or its boot broke) has no cluster facts to differ in.
    environmentDiffers: s.environment?.cluster == null ? [] : differences(base.environment, s.environment),
  }));
  const starts = shards.map((s) => s.summary.startedAt).sort();
  const ends = shards
    .flatMap((s) => (s.summary.finishedAt !== undefined ? [s.summary.finishedAt] : []))
    .sort();
  const last = ends.at(-1);
  const runIds = shards.map((s) => s.summary.runId).join("\n");
  const summary: RunSummary = {
    schemaVersion: base.schemaVersion ?? 2,
    runId: `merged-${createHash("sha256").update(runIds).digest("hex").slice(0, 12)}`,
    provider: base.provider,
    profile: base.profile,
    startedAt: starts[0] ?? base.startedAt,
    ...(last !== undefined ? { finishedAt: last } : {}),
    repeat: base.repeat,
    scenarios: shards.flatMap((s) => s.summary.scenarios).sort(byId),
    skipped: shards.flatMap((s) => s.summary.skipped ?? []).sort(byId),
    ...(base.environment !== undefined ? { environment: base.environment } : {}),
    error: mergedError(shards),
    merged: {
      count: base.shard.count,
      selected: base.shard.selected,
      selectionSha256: base.shard.selectionSha256,
      shards: records,
    },
  };
  const warnings = records
    .filter((r) => r.environmentDiffers.length > 0)
    .map(
      (r) =>
        `warning: shard ${r.index}/${base.shard.count} (${r.source}) ran with another ${r.environmentDiffers.join(", ")} than the merged summary's environment (shard ${base.shard.index}'s); recorded in merged.shards`,
    );
  return { summary, warnings };
}
