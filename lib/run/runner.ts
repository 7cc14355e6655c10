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
import { loadKubeconfig, type KubeconfigChoice } from "../kube/kubeconfig-load.js";
import { reapBeforeRun } from "./reap-first.js";
import { faultPreflightLines } from "./fault-preflight.js";
import { checkFaultPhaseSpread } from "../fault/phase-spread.js";
import { checkRunRails } from "./run-rails.js";
import { checkSimSize, scenarioWorkers, sizeChoice } from "./sim-size.js";
import {
  chooseProvider,
  openClusterUnderTest,
  type ClusterChoiceOptions,
  type ExistingClusterOptions,
} from "../cluster/create.js";
import type { ClusterUnderTest, ProviderName } from "../cluster/provider.js";
import { timingProfile, type TimingProfile } from "../cluster/profiles.js";
import { resolveAllureHistory } from "../report/allure-history.js";
import { generateAllureHtml } from "./allure-html.js";
import { clusterVersions } from "../report/cluster-versions.js";
import { rekindleBuild, runEnvironment, type ClusterFacts } from "../report/environment.js";
import {
  summarizeScenario,
  SUMMARY_SCHEMA_VERSION,
  type RunPhase,
  type RunSummary,
} from "../report/summary.js";
import { SUITE_FAMILIES, suiteFamilies, type SuiteFamily } from "../../suites/index.js";
import { PROJECT_ROOT } from "../util/project-files.js";
import { consoleProgress, type Progress } from "../util/progress.js";
import { failedScenarios, harnessFailure, summaryError, writeRunReports } from "./run-reports.js";
import type { ShardRecord, ShardSpec } from "../report/shard.js";
import { planShard, refuseEmptySelection, shardGroups, startShard } from "./shard-run.js";
import { drainQueue, type ScenarioSource } from "./parallel-queue.js";
import { checkProvider, planScenarioFiles, type FilePlan } from "../scenario-file/plan.js";
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

/** What `rekindle run` takes; the existing provider's choices are the cluster picker's own (cluster/create.ts). */
export interface RunOptions extends ExistingClusterOptions {
  /** "kind", "sim" or "existing". Default: kind when the kind CLI and a container engine answer, else sim. */
  provider?: string;
  /** Suite families; default all (none when scenario files are given). */
  suites?: string[];
  /** Scenario files or directories (`-f`): run their scenarios instead of the built-in families. */
  scenarioFiles?: string[];
  /** Timing profile; default "default" (upstream numbers). */
  profile?: string;
  /** sim: workers, zones and filler pods per shared-kwok worker. Default 3, 2, 0 (or the files'). */
  workers?: number;
  zones?: number;
  podsPerNode?: number;
  /** Runs of each scenario; default 1. */
  repeat?: number;
  /** A random wait below this (ms) before each run's first fault (fault/phase-spread.ts). Default 0. */
  faultPhaseSpreadMs?: number;
  /** Default reports/<run-id>. */
  reportDir?: string;
  /** Leave the cluster running afterwards (prints how to reach and stop it). Default false. */
  keepCluster?: boolean;
  /** kind: the cluster's name, reused when it exists. Default "rekindle". */
  clusterName?: string;
  /** kind: node image choice for a new cluster (see startKindCluster). Default $REKINDLE_KIND_IMAGE or "auto". */
  kindImage?: string;
  /** Generate the Allure HTML report (needs Java). Default true. */
  allureHtml?: boolean;
  /**
   * Where the Allure history to carry over comes from: a previous run's report directory, its
   * allure-report/ or allure-report/history/. Default: the newest other run in the same reports root.
   */
  allureHistory?: string;
  /** Only scenarios whose title matches this regular expression, e.g. "node-loss/(baseline|controller)". Default: all. */
  grep?: string;
  /** Run only shard `index` of `count` of the selection (lib/report/shard.ts deals it). Default: the whole selection. */
  shard?: ShardSpec;
  /**
   * One cluster of `--parallel` (lib/run/parallel-run.ts): run the scenarios this hands out, one at
   * a time, until it has none left. Default: the whole selection in one go.
   */
  scenarioSource?: ScenarioSource;
  /**
   * Where mocha's per-test lines go: "stdout" (default), "stderr" when stdout carries a
   * machine-readable result (`rekindle run -o json`), or "none" (`rekindle -q run`).
   */
  testLog?: "stdout" | "stderr" | "none";
  progress?: Progress;
  signal?: AbortSignal;
}

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

export function validateRunOptions(options: RunOptions): {
  suites: SuiteFamily[];
  repeat: number;
  phaseSpreadMs: number;
  profile: TimingProfile;
  filePlan: FilePlan | undefined;
  shard: ShardRecord | undefined;
} {
  const files = options.scenarioFiles ?? [];
  if (files.length > 0 && (options.suites?.length ?? 0) > 0)
    throw new RekindleError("INVALID_INPUT", "-f and --suite do not go together", {
      hint: "run scenario files (-f) or built-in families (--suite), one per command",
    });
  const suites = files.length > 0 ? [] : suiteFamilies(options.suites);
  const repeat = options.repeat ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > 100)
    throw RekindleError.invalidInput("repeat count", repeat, "a whole number from 1 to 100");
  const phaseSpreadMs = checkFaultPhaseSpread(options.faultPhaseSpreadMs);
  const filePlan = files.length > 0 ? filePlanOf(files, options) : undefined;
  const profile = filePlan?.profile ?? timingProfile(options.profile ?? "default");
  if (options.allureHistory !== undefined) resolveAllureHistory(options.allureHistory);
  // A kubeconfig or context that is not there is bad input, found before any report directory.
  if ((filePlan?.provider ?? options.provider) === "existing") loadKubeconfig(kubeconfigChoice(options));
  checkRunRails(options, filePlan);
  checkSimSize(options, filePlan);
  if (options.grep !== undefined) refuseEmptySelection(suites, filePlan, checkPattern(options.grep));
  const shard = planShard(options.shard, suites, filePlan, options.grep);
  return { suites, repeat, phaseSpreadMs, profile, filePlan, shard };
}

/** Refuses a --scenario pattern that is not a regular expression; the pattern, when it is one. */
export function checkPattern(grep: string): string {
  try {
    new RegExp(grep);
    return grep;
  } catch {
    throw RekindleError.invalidInput("--scenario pattern", grep, "a regular expression");
  }
}

/** The scenario files loaded and checked against the command line's provider, profile and repeat. */
function filePlanOf(files: readonly string[], options: RunOptions): FilePlan {
  return planScenarioFiles(files, {
    ...(options.provider !== undefined ? { provider: options.provider } : {}),
    ...(options.profile !== undefined ? { profile: options.profile } : {}),
    ...(options.repeat !== undefined ? { repeat: options.repeat } : {}),
  });
}

/** The provider: the scenario files' (checked against what it can do), else the command line's or the default. */
async function runProvider(
  options: RunOptions,
  filePlan: FilePlan | undefined,
  progress: Progress,
): Promise<ProviderName> {
  if (filePlan === undefined) return chooseProvider(options.provider, progress);
  const provider = filePlan.provider ?? (await chooseProvider(options.provider, progress));
  checkProvider(filePlan.files, provider);
  return provider;
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

export async function runConformance(options: RunOptions = {}): Promise<RunResult> {
  const { suites, repeat, phaseSpreadMs, profile, filePlan, shard } = validateRunOptions(options);
  const progress = options.progress ?? consoleProgress();
  // Interrupts arrive through the caller's signal (the CLI aborts it on Ctrl-C and waits for us).
  const signal = options.signal ?? new AbortController().signal;
  signal.addEventListener(
    "abort",
    () => {
      progress.info("interrupted: undoing the current scenario, then tearing the cluster down");
    },
    { once: true },
  );
  const provider = await runProvider(options, filePlan, progress);
  const runId = newRunId();
  const reportDir = resolve(options.reportDir ?? join(PROJECT_ROOT, "reports", runId));
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
    await using cluster = await openClusterUnderTest(provider, {
      ...clusterChoice(options),
      ...scenarioSize(provider, options, filePlan, suites, shard, profile),
      ...sizeChoice(options),
      ...fileClusterChoice(filePlan),
      profile,
      runDir: reportDir,
      runId,
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
      preflight(progress, cluster, groups, options.grep);
      const context: RunContext = { cluster, repeat, phaseSpreadMs, progress, signal, scenarios, skipped };
      const run = (some: ScenarioGroup[]) =>
        runMocha(some, context, reportDir, options.grep, options.testLog);
      mochaFailures =
        options.scenarioSource === undefined
          ? await run(groups)
          : await drainQueue(options.scenarioSource, groups, run, signal);
      await readProviderImages(cluster, facts);
    } finally {
      if (options.keepCluster === true) progress.info(`cluster kept: ${cluster.keepHint()}`);
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
  if (options.allureHtml !== false && phase !== "cluster-boot")
    await generateAllureHtml(reportDir, progress, options.allureHistory);
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

function kubeconfigChoice(options: RunOptions): KubeconfigChoice {
  return {
    ...(options.kubeconfig !== undefined ? { path: options.kubeconfig } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
  };
}

/** The user's choices of cluster among the run's options. */
function clusterChoice(
  options: RunOptions,
): Pick<ClusterChoiceOptions, "keep" | "clusterName" | "kindImage" | keyof ExistingClusterOptions> {
  return {
    ...(options.rails !== undefined ? { rails: options.rails } : {}),
    ...(options.nodeFaults !== undefined ? { nodeFaults: options.nodeFaults } : {}),
    ...(options.faultLocator !== undefined ? { faultLocator: options.faultLocator } : {}),
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
    keep: options.keepCluster === true,
    ...(options.clusterName !== undefined ? { clusterName: options.clusterName } : {}),
    ...(options.kindImage !== undefined ? { kindImage: options.kindImage } : {}),
    ...(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
    ...(options.storageClass !== undefined ? { storageClass: options.storageClass } : {}),
    ...(options.fenceConfig !== undefined ? { fenceConfig: options.fenceConfig } : {}),
    ...(options.controllerImage !== undefined ? { controllerImage: options.controllerImage } : {}),
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

/** A sim cluster sized to the selected families' scenarios (minWorkers), when no flag or file sizes it. */
function scenarioSize(
  provider: ProviderName,
  options: RunOptions,
  plan: FilePlan | undefined,
  suites: readonly SuiteFamily[],
  shard: ShardRecord | undefined,
  profile: TimingProfile,
): Pick<ClusterChoiceOptions, "workers"> {
  if (provider !== "sim" || plan !== undefined || options.workers !== undefined) return {};
  const workers = scenarioWorkers(shardGroups(familyGroups(suites), shard), profile, options.grep);
  return workers === undefined ? {} : { workers };
}

/** The cluster the files ask for: sim workers and zones, kind's config. */
function fileClusterChoice(
  plan: FilePlan | undefined,
): Pick<ClusterChoiceOptions, "workers" | "zones" | "podsPerNode" | "kindConfig"> {
  if (plan === undefined) return {};
  const { workers, zones, podsPerNode, kindConfig } = plan.cluster;
  return {
    ...(workers !== undefined ? { workers } : {}),
    ...(zones !== undefined ? { zones } : {}),
    ...(podsPerNode !== undefined ? { podsPerNode } : {}),
    ...(kindConfig !== undefined ? { kindConfig } : {}),
  };
}

async function runMocha(
  groups: readonly ScenarioGroup[],
  context: RunContext,
  reportDir: string,
  grep: string | undefined,
  testLog: RunOptions["testLog"] = "stdout",
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
