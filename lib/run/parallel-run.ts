// `rekindle run --parallel N|auto`: the selection run on N sim clusters at once, each in a process
// of its own (parallel-slot-main.ts) with its own cluster (its own name, ports and state directory
// under <report dir>/cluster-<k>/), drawing scenarios from one queue, longest expected first
// (parallel-queue.ts). Their summaries are joined into the reports one serial run writes
// (summary.json with `parallel`, junit.xml, sign-off, charts, allure-results and the Allure HTML),
// and the run exits as a serial run would.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ensureSimBinaries } from "../build/sim-binaries.js";
import { RekindleError } from "../errors.js";
import { joinParallelSummaries, chartsOf, type SlotRun } from "../report/parallel-join.js";
import { rekindleBuild, runEnvironment } from "../report/environment.js";
import type { RunSummary } from "../report/summary.js";
import { listedFileScenarios } from "../scenario-file/scenarios.js";
import { PROJECT_ROOT } from "../util/project-files.js";
import { consoleProgress, type Progress } from "../util/progress.js";
import { SCENARIOS } from "../../suites/index.js";
import { expectedEndMs, listExpectationInputs, scenarioLengthMs } from "./expected-length.js";
import { checkParallelProvider, clusterCount, type ParallelChoice } from "./parallel-count.js";
import type { SlotRunOptions } from "./parallel-protocol.js";
import { ScenarioQueue, type QueuedScenario } from "./parallel-queue.js";
import { slotSizes, type SlotSize } from "./parallel-sizes.js";
import { copyAllureResults, failedScenarios, writeRunReports } from "./run-reports.js";
import { generateAllureHtml } from "./allure-html.js";
import {
  interrupted,
  newRunId,
  runConformance,
  validateRunOptions,
  type RunOptions,
  type RunResult,
} from "./runner.js";
import { selectedScenarioIds, shardLine } from "./shard-run.js";
import { runPool } from "./parallel-pool.js";
import { startSlot, type SlotExit } from "./slot-process.js";

type Validated = ReturnType<typeof validateRunOptions>;

/** Refuses what --parallel cannot do, before anything starts. */
function checkParallelOptions(
  options: RunOptions,
  choice: ParallelChoice,
  plan: Validated["filePlan"],
): void {
  checkParallelProvider(plan?.provider ?? options.provider, choice);
  if (options.keepCluster === true)
    throw new RekindleError("INVALID_INPUT", `--keep-cluster does not go with --parallel ${String(choice)}`, {
      hint: "--parallel starts one cluster per slot and tears each down; to keep a cluster, run without --parallel",
    });
}

/** The selection in serial-run order, each with its expected length. */
async function queuedSelection(options: RunOptions, v: Validated): Promise<QueuedScenario[]> {
  const ids = selectedScenarioIds(v.suites, v.filePlan, options.grep);
  const share = v.shard === undefined ? undefined : new Set(v.shard.scenarios);
  const chosen = share === undefined ? ids : ids.filter((id) => share.has(id));
  const inputs = listExpectationInputs(v.profile);
  const lengths = new Map<string, number>();
  // The workers a scenario needs, when no flag sizes every cluster (a file's spec.cluster sizes its run).
  const workers = new Map<string, number>();
  if (v.filePlan !== undefined)
    for (const s of await listedFileScenarios(v.filePlan, inputs))
      lengths.set(s.id, expectedEndMs(s.expected));
  else
    for (const family of v.suites)
      for (const s of SCENARIOS[family]) {
        lengths.set(s.id, scenarioLengthMs(s, inputs));
        const needs = s.minWorkers?.(v.profile);
        if (needs !== undefined && options.workers === undefined) workers.set(s.id, needs);
      }
  return chosen.map((id) => {
    const needs = workers.get(id);
    return { id, expectedMs: lengths.get(id) ?? 0, ...(needs !== undefined ? { workers: needs } : {}) };
  });
}

/** A cluster's options: the run's, with the workers its size (parallel-sizes.ts) gives it. */
function slotOptions(options: RunOptions, reportDir: string, size: SlotSize): SlotRunOptions {
  const { suites, scenarioFiles, profile, zones, podsPerNode, repeat, grep, testLog } = options;
  const workers = size.workers ?? options.workers;
  return {
    provider: "sim",
    reportDir,
    ...(suites !== undefined ? { suites } : {}),
    ...(scenarioFiles !== undefined ? { scenarioFiles } : {}),
    ...(profile !== undefined ? { profile } : {}),
    ...(workers !== undefined ? { workers } : {}),
    ...(zones !== undefined ? { zones } : {}),
    ...(podsPerNode !== undefined ? { podsPerNode } : {}),
    ...(repeat !== undefined ? { repeat } : {}),
    ...(grep !== undefined ? { grep } : {}),
    ...(testLog !== undefined ? { testLog } : {}),
  };
}

function readSlotSummary(reportDir: string): RunSummary | undefined {
  const path = join(reportDir, "summary.json");
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as RunSummary;
  } catch {
    return undefined;
  }
}

/** A cluster's process as a SlotRun: its summary, or why it has none. */
function slotRun(index: number, exit: SlotExit, reportDir: string, taken: string[]): SlotRun {
  const summary = readSlotSummary(reportDir);
  const how = exit.signal !== null ? `signal ${exit.signal}` : `exit code ${String(exit.exitCode)}`;
  return {
    index,
    reportDir,
    summary,
    taken,
    ...(summary === undefined
      ? {
          lost: {
            code: "HARNESS_FAILED",
            message: `the cluster's process ended (${how}) without writing its summary`,
            phase: "suites" as const,
          },
        }
      : {}),
  };
}

/** The harness error of the whole run: the first cluster's, naming it (its code kept: 2 stays 2). */
function runHarnessError(
  exits: readonly { index: number; exit: SlotExit }[],
  joined: RunSummary,
): RekindleError | undefined {
  const reported = exits.find((e) => e.exit.done?.harnessError !== undefined);
  const error = reported?.exit.done?.harnessError;
  if (reported !== undefined && error !== undefined)
    return new RekindleError(error.code, `cluster ${reported.index}: ${error.message}`, {
      ...(error.hint !== undefined ? { hint: error.hint } : {}),
    });
  if (joined.error != null && joined.error.code !== "ABORTED")
    return new RekindleError("HARNESS_FAILED", joined.error.message, {
      hint: "see the cluster's lines above",
    });
  return undefined;
}

/**
 * Runs the selection on `choice` sim clusters. `byDefault`: no --parallel was given, so nothing
 * is refused for it, and a selection that one cluster runs as fast runs serially instead.
 */
export async function runParallel(
  options: RunOptions,
  choice: ParallelChoice,
  byDefault = false,
): Promise<RunResult> {
  const v = validateRunOptions(options);
  if (!byDefault) checkParallelOptions(options, choice, v.filePlan);
  // A shard whose share is empty starts nothing: the serial path knows how to say so.
  if (v.shard?.scenarios.length === 0) return runConformance({ ...options, provider: "sim" });
  const selection = await queuedSelection(options, v);
  if (selection.length === 0)
    throw new RekindleError("INVALID_INPUT", "--parallel: the selection is empty", {
      hint: "rekindle list --scenario REGEX shows what a pattern selects",
    });
  const progress = options.progress ?? consoleProgress();
  const signal = options.signal ?? new AbortController().signal;
  const { clusters, why } = clusterCount(
    choice,
    selection.map((s) => s.expectedMs),
  );
  if (byDefault && clusters === 1) return runConformance(options);
  const runId = newRunId();
  const startedAt = new Date().toISOString();
  const reportDir = resolve(options.reportDir ?? join(PROJECT_ROOT, "reports", runId));
  mkdirSync(join(reportDir, "charts"), { recursive: true });
  progress.info(`reports → ${reportDir}`);
  if (v.shard !== undefined) progress.info(shardLine(v.shard));
  const sizes = slotSizes(selection, clusters);
  progress.info(
    `parallel: ${clusters} sim cluster(s) for ${selection.length} scenario(s), longest expected first (${why})${sizes.why !== undefined ? `; ${sizes.why}` : ""}`,
  );
  // Built once here, not by every cluster at once (a cold build takes tens of minutes).
  await ensureSimBinaries({ progress, signal });
  const build = rekindleBuild().catch(() => undefined);
  const queue = new ScenarioQueue(selection);
  const expected = new Map(selection.map((s) => [s.id, s.expectedMs]));
  const out = options.testLog === "stderr" ? process.stderr : process.stdout;
  const { exits, replaced } = await runPool({
    sizes: sizes.slots,
    queue,
    signal,
    start: (index, size) =>
      startSlot(index, slotOptions(options, join(reportDir, `cluster-${index}`), size), {
        out,
        err: process.stderr,
        next: () => {
          if (signal.aborted) return undefined;
          const id = queue.take(index, size.kind);
          if (id !== undefined)
            progress.info(
              `[cluster ${index}] takes ${id} (expected ${Math.round((expected.get(id) ?? 0) / 1000)} s from its fault; ${queue.left.length} left)`,
            );
          return id;
        },
      }),
    onReplace: (index, replacedIndex) => {
      progress.info(
        `[cluster ${index}] starts, default-sized, in place of cluster ${replacedIndex}, whose scenarios are done`,
      );
    },
  });
  return finish({
    options,
    v,
    progress,
    signal,
    runId,
    startedAt,
    reportDir,
    why: [
      why,
      ...(sizes.why !== undefined ? [sizes.why] : []),
      ...(replaced > 0
        ? [`${replaced} of those replaced by a default-sized cluster once their scenarios were done`]
        : []),
    ].join("; "),
    queue,
    selection,
    exits,
    build: await build,
  });
}

interface FinishInput {
  options: RunOptions;
  v: Validated;
  progress: Progress;
  signal: AbortSignal;
  runId: string;
  startedAt: string;
  reportDir: string;
  why: string;
  queue: ScenarioQueue;
  selection: readonly QueuedScenario[];
  exits: readonly { index: number; exit: SlotExit }[];
  build: Awaited<ReturnType<typeof rekindleBuild>> | undefined;
}

/** Joins the clusters' reports into the run's, and its result as a serial run ends. */
async function finish(f: FinishInput): Promise<RunResult> {
  const takenBy = (index: number) =>
    [...f.queue.taken].filter(([, slot]) => slot === index).map(([id]) => id);
  const runs = f.exits.map(({ index, exit }) =>
    slotRun(index, exit, join(f.reportDir, `cluster-${index}`), takenBy(index)),
  );
  const summary = joinParallelSummaries({
    runId: f.runId,
    startedAt: f.startedAt,
    finishedAt: new Date().toISOString(),
    provider: "sim",
    profile: f.v.profile.name,
    repeat: f.v.filePlan?.maxRepeat ?? f.v.repeat,
    selection: f.selection.map((s) => s.id),
    slots: runs,
    chosenBy: f.why,
    notRun: [...f.queue.left],
    ...(f.v.shard !== undefined ? { shard: f.v.shard } : {}),
    environment: await runEnvironment({ provider: "sim", timing: f.v.profile, rekindle: f.build }),
  });
  writeRunReports(f.reportDir, summary, chartsOf(summary), f.progress);
  copyAllureResults(
    runs.map((r) => r.reportDir),
    f.reportDir,
  );
  if (f.options.allureHtml !== false && summary.scenarios.length > 0)
    await generateAllureHtml(f.reportDir, f.progress, f.options.allureHistory);
  if (f.signal.aborted) throw interrupted(f.signal);
  const testFailures = f.exits.reduce((n, e) => n + (e.exit.done?.testFailures ?? 0), 0);
  const harnessError = runHarnessError(f.exits, summary);
  return {
    summary,
    reportDir: f.reportDir,
    failed: Math.max(failedScenarios(summary, false), testFailures),
    testFailures,
    ...(harnessError !== undefined ? { harnessError } : {}),
  };
}
