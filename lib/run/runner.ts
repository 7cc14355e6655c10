// `rekindle run`: boots the provider's cluster, runs the chosen mocha suites against it (Allure
// results + spec output), then writes the reports: summary.json, junit.xml, signoff.html/.md, one
// SVG timeline per scenario and the Allure HTML report. Everything started is stopped again, also
// on failure; the reports are written also when the harness itself broke, and say so.
import AllureMochaReporter from "allure-mocha";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import Mocha from "mocha";
import { errorMessage, RekindleError } from "../errors.js";
import { reapBeforeRun } from "./reap-first.js";
import { faultPreflightLines } from "./fault-preflight.js";
import { openClusterUnderTest } from "../cluster/create.js";
import type { RunPlan } from "./run-plan.js";
import type { TestLog } from "./run-flags.js";
import type { ClusterUnderTest } from "../cluster/provider.js";
import { generateAllureHtml } from "./allure-html.js";
import { clusterVersions } from "../report/cluster-versions.js";
import { rekindleBuild, runEnvironment, type ClusterFacts } from "../report/environment.js";
import {
  summarizeScenario,
  SUMMARY_SCHEMA_VERSION,
  type RunPhase,
  type RunSummary,
} from "../report/summary.js";
import { SUITE_FAMILIES, type SuiteFamily } from "../../suites/index.js";
import { PROJECT_ROOT } from "../util/project-files.js";
import { consoleProgress, type Progress } from "../util/progress.js";
import { failedScenarios, harnessFailure, summaryError, writeRunReports } from "./run-reports.js";
import { shardGroups, startShard } from "./shard-run.js";
import { drainQueue, type ScenarioSource } from "./parallel-queue.js";
import type { FilePlan } from "../scenario-file/plan.js";
import { prepareFileScenarios, type PreparedFileScenario } from "../scenario-file/scenarios.js";
import {
  addScenarioSuites,
  familyGroups,
  FILE_GROUP_NAME,
  type RecordedScenario,
  type RunContext,
  type ScenarioGroup,
} from "./suite.js";

export { SUITE_FAMILIES };
export { PROVIDER_NAMES as PROVIDERS } from "../cluster/provider.js";

export interface RunResult {
  summary: RunSummary;
  reportDir: string;
  /** Failed scenarios (at least 1 when none ran, or mocha counted failures outside them). */
  failed: number;
  /** Mocha's own failure count (a scenario that threw before it was recorded counts here only). */
  testFailures?: number;
  /**
   * Set when the harness or its infrastructure broke (HARNESS_FAILED, exit 3), or when what
   * broke was the user's input found only on opening the cluster (INVALID_INPUT, exit 2). The
   * reports are written either way, and say so in summary.json's `error`.
   */
  harnessError?: RekindleError;
}

/** Thrown past the cluster's start when a shard has nothing to run (caught right there). */
const NOTHING_TO_RUN = new Error("this shard has nothing to run");

export function newRunId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-");
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

/** The mocha suites of the run: the families, or the scenario files' scenarios prepared for this cluster. */
async function scenarioGroups(
  suites: readonly SuiteFamily[],
  filePlan: FilePlan | undefined,
  cluster: ClusterUnderTest,
): Promise<ScenarioGroup[]> {
  if (filePlan === undefined) return familyGroups(suites);
  return [fileGroup(await prepareFileScenarios(filePlan, cluster))];
}

function banner(progress: Progress, cluster: ClusterUnderTest, runId: string, what: string) {
  const p = cluster.profile;
  progress.info(`rekindle run ${runId}`);
  progress.info(`  provider  ${cluster.provider}: ${cluster.description}`);
  progress.info(
    `  profile   ${p.name}: lease ${p.nodeLeaseDurationSeconds}s, grace ${p.nodeMonitorGracePeriodSeconds}s, toleration ${p.defaultUnreachableTolerationSeconds}s`,
  );
  progress.info(`  ${what}`);
  const unsupported = Object.entries(cluster.unsupported);
  if (unsupported.length > 0) {
    progress.info(
      `  skipping  ${unsupported.map(([capability]) => capability).join(", ")} faults (reasons as each scenario is skipped)`,
    );
  }
}

/** The cluster's description, and its own timing and knob sources where it read them (existing). */
function recordClusterFacts(cluster: ClusterUnderTest, facts: ClusterFacts): void {
  facts.cluster = cluster.description;
  if (cluster.knobSources === undefined) return;
  facts.timing = cluster.profile;
  facts.knobSources = [...cluster.knobSources];
}

/** On a cluster rekindle did not create, with faults allowed: what, where and until when, before any scenario. */
function preflight(
  progress: Progress,
  cluster: ClusterUnderTest,
  groups: ScenarioGroup[],
  grep?: string,
): void {
  for (const line of faultPreflightLines(cluster, groups, grep !== undefined ? { grep } : {}))
    progress.info(line);
}

/** What a run takes from the process that runs it, beside its plan. */
export interface RunScope {
  /** Default: the console. */
  progress?: Progress;
  /** Interrupts the run (the CLI aborts it on Ctrl-C and waits for the run to end). Default: none. */
  signal?: AbortSignal;
  /**
   * One cluster of `--parallel` (lib/run/parallel-run.ts): run the scenarios this hands out, one at
   * a time, until it has none left. Default: the whole selection in one go.
   */
  scenarioSource?: ScenarioSource;
}

/** Runs the plan on one cluster, serially (its layout is run-choice.ts's business). */
export async function runConformance(plan: RunPlan, scope: RunScope = {}): Promise<RunResult> {
  const progress = scope.progress ?? consoleProgress();
  const { suites, repeat, phaseSpreadMs, profile, filePlan, shard, grep } = plan;
  const provider = plan.cluster.provider;
  // Interrupts arrive through the caller's signal (the CLI aborts it on Ctrl-C and waits for us).
  const signal = scope.signal ?? new AbortController().signal;
  signal.addEventListener(
    "abort",
    () => {
      progress.info("interrupted: undoing the current scenario, then tearing the cluster down");
    },
    { once: true },
  );
  const runId = newRunId();
  const reportDir = plan.reportDir ?? resolve(join(PROJECT_ROOT, "reports", runId));
  mkdirSync(join(reportDir, "charts"), { recursive: true });
  progress.info(`reports → ${reportDir}`);

  const summary: RunSummary = {
    schemaVersion: SUMMARY_SCHEMA_VERSION,
    runId,
    provider,
    profile: profile.name,
    startedAt: new Date().toISOString(),
    repeat: summaryRepeat(filePlan, repeat),
    scenarios: [],
  };
  const nothingToRun = startShard(summary, shard, progress);
  const scenarios = new Map<string, RecordedScenario>();
  const skipped = new Map<string, string>();
  // Read before anything runs: the summary names the commit that ran, not one made meanwhile.
  const build = rekindleBuild().catch(() => undefined);
  const facts: ClusterFacts = {};
  let mochaFailures = 0;
  // Where the run is, for a harness failure's report: the cluster boots, the suites run, it goes.
  let phase: RunPhase = "cluster-boot";
  let broke: unknown;
  let abortedIn: RunPhase | undefined = signal.aborted ? phase : undefined;
  signal.addEventListener("abort", () => (abortedIn ??= phase), { once: true });
  try {
    if (nothingToRun) throw NOTHING_TO_RUN;
    await using cluster = await openClusterUnderTest(plan.cluster, {
      profile,
      runDir: reportDir,
      runId,
      keep: plan.keepCluster,
      progress,
      signal,
    });
    phase = "suites";
    try {
      await reapBeforeRun(cluster, progress);
      recordClusterFacts(cluster, facts);
      facts.versions = await clusterVersions(cluster.kubeConfig(), provider);
      const all = await scenarioGroups(suites, filePlan, cluster);
      const groups = shardGroups(all, shard);
      banner(progress, cluster, runId, runWhat(groups, filePlan, repeat));
      preflight(progress, cluster, groups, grep);
      const context: RunContext = { cluster, repeat, phaseSpreadMs, progress, signal, scenarios, skipped };
      const run = (some: ScenarioGroup[]) => runMocha(some, context, reportDir, grep, plan.testLog);
      mochaFailures =
        scope.scenarioSource === undefined
          ? await run(groups)
          : await drainQueue(scope.scenarioSource, groups, run, signal);
      await readProviderImages(cluster, facts);
    } finally {
      if (plan.keepCluster) progress.info(`cluster kept: ${cluster.keepHint()}`);
    }
    // Reached only when the suites ran through: what fails from here is the cluster's disposal.
    phase = "teardown";
  } catch (error) {
    broke = error === NOTHING_TO_RUN ? undefined : error;
  }

  for (const recorded of scenarios.values()) {
    summary.scenarios.push(summarizeScenario(recorded.id, recorded.runs, recorded.expected));
  }
  summary.skipped = [...skipped].map(([id, reason]) => ({ id, reason }));
  summary.environment = await runEnvironment({ provider, timing: profile, ...facts, rekindle: await build });
  const harnessError = broke === undefined ? undefined : harnessFailure(broke, phase, reportDir);
  // An interrupted run's reports say so too (its exit is 130, below).
  const stopped = broke ?? (signal.aborted ? interrupted(signal) : undefined);
  summary.error = summaryError(stopped, broke, abortedIn, phase);
  summary.finishedAt = new Date().toISOString();
  writeRunReports(reportDir, summary, [...scenarios.values()], progress);
  if (plan.allureHtml && phase !== "cluster-boot")
    await generateAllureHtml(reportDir, progress, plan.allureHistory);
  const failed = failedScenarios(summary, nothingToRun);
  if (signal.aborted) throw interrupted(signal);
  return {
    summary,
    reportDir,
    failed: Math.max(failed, mochaFailures),
    testFailures: mochaFailures,
    ...(harnessError !== undefined ? { harnessError } : {}),
  };
}

export function interrupted(signal: AbortSignal): RekindleError {
  return new RekindleError("ABORTED", "rekindle run was interrupted", { cause: signal.reason });
}

/** The node and controller images, read before the cluster goes; a failure leaves them unknown, saying why. */
async function readProviderImages(cluster: ClusterUnderTest, facts: ClusterFacts): Promise<void> {
  if (cluster.images === undefined) return;
  try {
    facts.images = await cluster.images();
  } catch (error) {
    facts.imagesError = errorMessage(error);
  }
}

/** The banner's line on what runs: the families, or the scenario files. */
function runWhat(groups: readonly ScenarioGroup[], plan: FilePlan | undefined, repeat: number): string {
  if (plan === undefined) return `suites    ${groups.map((g) => g.name).join(", ")} (repeat ${repeat})`;
  return `files     ${plan.files.map((f) => `${f.path} (repeat ${plan.repeats.get(f.path) ?? 1})`).join(", ")}`;
}

/** The scenario files' scenarios as one mocha suite. */
function fileGroup(prepared: readonly PreparedFileScenario[]): ScenarioGroup {
  return {
    name: FILE_GROUP_NAME,
    file: prepared[0]?.file ?? FILE_GROUP_NAME,
    scenarios: prepared.map(({ definition, repeat }) => ({ definition, repeat })),
  };
}

/** summary.json's `repeat`: --repeat's, or the most any scenario file asks for. */
function summaryRepeat(plan: FilePlan | undefined, repeat: number): number {
  return plan?.maxRepeat ?? repeat;
}

async function runMocha(
  groups: readonly ScenarioGroup[],
  context: RunContext,
  reportDir: string,
  grep: string | undefined,
  testLog: TestLog,
): Promise<number> {
  // The spec reporter prints through this (mocha's own hook for where its lines go).
  const consoleLog = Mocha.reporters.Base.consoleLog;
  // To stderr under -o json; dropped under -q ("none").
  if (testLog !== "stdout") Mocha.reporters.Base.consoleLog = testLog === "stderr" ? console.error : () => 0;
  const mocha = new Mocha({
    timeout: 0,
    reporter: AllureMochaReporter as unknown as Mocha.ReporterConstructor,
    reporterOptions: { resultsDir: join(reportDir, "allure-results"), extraReporters: "spec" },
    ...(grep !== undefined ? { grep: new RegExp(grep) } : {}),
  });
  addScenarioSuites(mocha.suite, groups, context);
  const { signal } = context;
  try {
    // Removed after the run: a --parallel cluster runs mocha once per scenario on one signal.
    let abortRunner = (): void => undefined;
    const failures = await new Promise<number>((resolve) => {
      const runner = mocha.run((count) => {
        resolve(count);
      });
      abortRunner = () => runner.abort();
      signal.addEventListener("abort", abortRunner, { once: true });
    });
    mocha.dispose();
    signal.removeEventListener("abort", abortRunner);
    return failures;
  } finally {
    Mocha.reporters.Base.consoleLog = consoleLog;
  }
}
