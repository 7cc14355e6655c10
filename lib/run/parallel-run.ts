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
import { clusterCount } from "./parallel-count.js";
import { ScenarioQueue, type QueuedScenario } from "./parallel-queue.js";
import { slotSizes, type SlotSize } from "./parallel-sizes.js";
import { copyAllureResults, failedScenarios, writeRunReports } from "./run-reports.js";
import { generateAllureHtml } from "./allure-html.js";
import type { SimClusterSpec } from "../cluster/cluster-spec.js";
import type { RunPlan } from "./run-plan.js";
import { interrupted, newRunId, runConformance, type RunResult, type RunScope } from "./runner.js";
import { selectedScenarioIds, shardLine } from "./shard-run.js";
import { runPool } from "./parallel-pool.js";
import { startSlot, type SlotExit } from "./slot-process.js";
import { slotPlan } from "./slot-plan.js";

/** The selection in serial-run order, each with its expected length. */
async function queuedSelection(plan: RunPlan): Promise<QueuedScenario[]> {
  const ids = selectedScenarioIds(plan.suites, plan.filePlan, plan.grep);
  const share = plan.shard === undefined ? undefined : new Set(plan.shard.scenarios);
  const chosen = share === undefined ? ids : ids.filter((id) => share.has(id));
  const inputs = listExpectationInputs(plan.profile);
  const lengths = new Map<string, number>();
  // The workers a scenario needs, when no flag sizes every cluster (a file's spec.cluster sizes its run).
  const workers = new Map<string, number>();
  if (plan.filePlan !== undefined)
    for (const s of await listedFileScenarios(plan.filePlan, inputs))
      lengths.set(s.id, expectedEndMs(s.expected));
  else
    for (const family of plan.suites)
      for (const s of SCENARIOS[family]) {
        lengths.set(s.id, scenarioLengthMs(s, inputs));
        const needs = s.minWorkers?.(plan.profile);
        if (needs !== undefined && !plan.layout.workersGiven) workers.set(s.id, needs);
      }
  return chosen.map((id) => {
    const needs = workers.get(id);
    return { id, expectedMs: lengths.get(id) ?? 0, ...(needs !== undefined ? { workers: needs } : {}) };
  });
}

/** A cluster's spec: the run's, with the workers its size (parallel-sizes.ts) gives it. */
function slotCluster(plan: RunPlan, size: SlotSize): SimClusterSpec {
  if (plan.cluster.provider !== "sim")
    throw new RekindleError("INTERNAL", `--parallel planned on ${plan.cluster.provider}, not the sim`);
  return { ...plan.cluster, workers: size.workers ?? plan.cluster.workers };
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
 * Runs the plan's selection on its layout's sim clusters (planRun refused what --parallel cannot
 * do). A layout chosen by default runs serially when one cluster runs the selection as fast.
 */
export async function runParallel(plan: RunPlan, scope: RunScope = {}): Promise<RunResult> {
  // A shard whose share is empty starts nothing: the serial path knows how to say so.
  if (plan.shard?.scenarios.length === 0) return runConformance(plan, scope);
  const selection = await queuedSelection(plan);
  const progress = scope.progress ?? consoleProgress();
  const signal = scope.signal ?? new AbortController().signal;
  const { clusters, why } = clusterCount(
    plan.layout.parallel,
    selection.map((s) => s.expectedMs),
  );
  if (plan.layout.byDefault && clusters === 1) return runConformance(plan, scope);
  const runId = newRunId();
  const startedAt = new Date().toISOString();
  const reportDir = plan.reportDir ?? resolve(join(PROJECT_ROOT, "reports", runId));
  mkdirSync(join(reportDir, "charts"), { recursive: true });
  progress.info(`reports → ${reportDir}`);
  if (plan.shard !== undefined) progress.info(shardLine(plan.shard));
  const sizes = slotSizes(selection, clusters);
  progress.info(
    `parallel: ${clusters} sim cluster(s) for ${selection.length} scenario(s), longest expected first (${why})${sizes.why !== undefined ? `; ${sizes.why}` : ""}`,
  );
  // Built once here, not by every cluster at once (a cold build takes tens of minutes).
  await ensureSimBinaries({ progress, signal });
  const build = rekindleBuild().catch(() => undefined);
  const queue = new ScenarioQueue(selection);
  const expected = new Map(selection.map((s) => [s.id, s.expectedMs]));
  const out = plan.testLog === "stderr" ? process.stderr : process.stdout;
  const { exits, replaced } = await runPool({
    sizes: sizes.slots,
    queue,
    signal,
    start: (index, size) =>
      startSlot(index, slotPlan(plan, slotCluster(plan, size), join(reportDir, `cluster-${index}`)), {
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
    plan,
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
  plan: RunPlan;
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
    profile: f.plan.profile.name,
    repeat: f.plan.filePlan?.maxRepeat ?? f.plan.repeat,
    selection: f.selection.map((s) => s.id),
    slots: runs,
    chosenBy: f.why,
    notRun: [...f.queue.left],
    ...(f.plan.shard !== undefined ? { shard: f.plan.shard } : {}),
    environment: await runEnvironment({ provider: "sim", timing: f.plan.profile, rekindle: f.build }),
  });
  writeRunReports(f.reportDir, summary, chartsOf(summary), f.progress);
  copyAllureResults(
    runs.map((r) => r.reportDir),
    f.reportDir,
  );
  if (f.plan.allureHtml && summary.scenarios.length > 0)
    await generateAllureHtml(f.reportDir, f.progress, f.plan.allureHistory);
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
