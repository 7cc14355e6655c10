// `rekindle run --parallel`: the summaries of the clusters that ran one selection side by side,
// joined into the summary one serial run writes: scenarios and skips in the selection's order (the
// order a serial run runs them), the environment of the first cluster that came up, the first
// harness error naming its cluster, and `parallel` saying which cluster ran what. The clusters are
// one run on one machine, so nothing is compared or refused here as `rekindle merge` must for a
// CI matrix: the parent process started every one of them with the same options.
import type { RunEnvironment } from "./environment.js";
import type { RunError } from "./run-error.js";
import type { RunSummary } from "./summary-types.js";

/** One cluster's finished run: its summary (undefined when it wrote none) and where its reports are. */
export interface SlotRun {
  index: number;
  reportDir: string;
  /** Undefined when the cluster's process died before writing summary.json. */
  summary: RunSummary | undefined;
  /** What it took from the queue, in order. */
  taken: string[];
  /** Why it wrote no summary (its process died), if it did not. */
  lost?: RunError;
}

export interface JoinInput {
  runId: string;
  startedAt: string;
  finishedAt: string;
  provider: string;
  profile: string;
  repeat: number;
  /** The selection in serial-run order. */
  selection: readonly string[];
  slots: readonly SlotRun[];
  chosenBy: string;
  notRun: readonly string[];
  /** Shared by every cluster (`--shard` with `--parallel`): the share this run ran. */
  shard?: RunSummary["shard"];
  /** Fallback environment when no cluster wrote one. */
  environment?: RunEnvironment;
}

function inSelectionOrder<T extends { id: string }>(items: T[], selection: readonly string[]): T[] {
  const rank = new Map(selection.map((id, i) => [id, i]));
  const at = (id: string) => rank.get(id) ?? Number.MAX_SAFE_INTEGER;
  return items.sort((a, b) => at(a.id) - at(b.id) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function slotError(slot: SlotRun): RunError | null {
  return slot.summary?.error ?? slot.lost ?? null;
}

/** The joined run's error: none, or the first broken cluster's, saying which clusters broke. */
function joinedError(slots: readonly SlotRun[]): RunError | null {
  const broken = slots.filter((s) => slotError(s) !== null);
  const [first] = broken;
  const error = first === undefined ? null : slotError(first);
  if (first === undefined || error === null) return null;
  const others =
    broken.length > 1
      ? ` (also clusters ${broken
          .slice(1)
          .map((s) => s.index)
          .join(", ")})`
      : "";
  // An interrupt reaches every cluster: it is the run's error as such, not one cluster's.
  if (error.code === "ABORTED") return error;
  return { ...error, message: `cluster ${first.index}${others}: ${error.message}` };
}

/** The environment's cluster line says the run had several (the sign-off's provider row shows it). */
function clustersSaid(environment: RunEnvironment | undefined, clusters: number): RunEnvironment | undefined {
  if (environment?.cluster == null || clusters < 2) return environment;
  return { ...environment, cluster: `${environment.cluster}, one of ${clusters} side by side (--parallel)` };
}

/** The summary of the whole parallel run. */
export function joinParallelSummaries(input: JoinInput): RunSummary {
  const summaries = input.slots.flatMap((s) => (s.summary === undefined ? [] : [s.summary]));
  const base = summaries.find((s) => s.environment?.cluster != null) ?? summaries[0];
  const environment = clustersSaid(base?.environment ?? input.environment, input.slots.length);
  return {
    schemaVersion: base?.schemaVersion ?? 2,
    runId: input.runId,
    provider: input.provider,
    profile: input.profile,
    startedAt: input.startedAt,
    finishedAt: input.finishedAt,
    repeat: input.repeat,
    scenarios: inSelectionOrder(
      summaries.flatMap((s) => s.scenarios),
      input.selection,
    ),
    skipped: inSelectionOrder(
      summaries.flatMap((s) => s.skipped ?? []),
      input.selection,
    ),
    ...(environment !== undefined ? { environment } : {}),
    error: joinedError(input.slots),
    ...(input.shard !== undefined ? { shard: input.shard } : {}),
    parallel: {
      clusters: input.slots.length,
      chosenBy: input.chosenBy,
      slots: input.slots.map((slot) => ({
        index: slot.index,
        runId: slot.summary?.runId ?? `cluster-${slot.index}`,
        reportDir: slot.reportDir,
        startedAt: slot.summary?.startedAt ?? input.startedAt,
        ...(slot.summary?.finishedAt !== undefined ? { finishedAt: slot.summary.finishedAt } : {}),
        scenarios: [...slot.taken],
        error: slotError(slot),
      })),
      notRun: [...input.notRun],
    },
  };
}

/** Each scenario's first run's timeline chart, as summary.json carries it. */
export function chartsOf(summary: RunSummary): { id: string; chart: string }[] {
  return summary.scenarios.flatMap((s) => {
    const chart: unknown = (s.runs[0] as { chart?: unknown } | undefined)?.chart;
    return typeof chart === "string" ? [{ id: s.id, chart }] : [];
  });
}
