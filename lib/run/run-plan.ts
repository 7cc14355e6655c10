// `rekindle run`'s inputs — its flags and the scenario files — checked once, here, into the
// RunPlan that the runner consumes: what runs, how often, on which timing profile, and the cluster
// it runs on (lib/cluster/cluster-spec.ts, one variant per provider). Bad input is a RekindleError
// naming the flag and its valid forms, before any report directory, engine or cluster.
import { RekindleError } from "../errors.js";
import { loadKubeconfig, type KubeconfigChoice } from "../kube/kubeconfig-load.js";
import { checkFaultPhaseSpread } from "../fault/phase-spread.js";
import { chooseProvider } from "../cluster/create.js";
import type { ClusterSpec, ExistingChoices } from "../cluster/cluster-spec.js";
import { SHARED_STORAGE_CLASS } from "../cluster/kind/storage-classes.js";
import type { ProviderName } from "../cluster/provider.js";
import { timingProfile, type TimingProfile } from "../cluster/profiles.js";
import { resolveAllureHistory } from "../report/allure-history.js";
import type { ShardRecord, ShardSpec } from "../report/shard.js";
import { checkProvider, planScenarioFiles, type FilePlan } from "../scenario-file/plan.js";
import { suiteFamilies, type SuiteFamily } from "../../suites/index.js";
import type { Progress } from "../util/progress.js";
import { checkRunRails } from "./run-rails.js";
import { checkSimSize, scenarioWorkers } from "./sim-size.js";
import { planShard, refuseEmptySelection, shardGroups } from "./shard-run.js";
import type { ScenarioSource } from "./parallel-queue.js";
import { familyGroups } from "./suite.js";

/** What `rekindle run` takes, as its flags give it; the existing provider's are its spec's own. */
export interface RunOptions extends ExistingChoices {
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

/** The run's inputs checked, before the provider is known (validateRunOptions). */
export interface CheckedRun {
  suites: SuiteFamily[];
  repeat: number;
  phaseSpreadMs: number;
  profile: TimingProfile;
  filePlan: FilePlan | undefined;
  shard: ShardRecord | undefined;
}

/** One run, planned: the checked inputs and the cluster to run them on. */
export interface RunPlan extends CheckedRun {
  cluster: ClusterSpec;
}

/** Checks every input that needs no provider probe; throws the first bad one. */
export function validateRunOptions(options: RunOptions): CheckedRun {
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

/**
 * The run's plan: its inputs checked (validateRunOptions), the provider chosen (the files', the
 * flag's, else kind when it runs here, else sim) and its cluster spec built.
 */
export async function planRun(options: RunOptions, progress: Progress): Promise<RunPlan> {
  const checked = validateRunOptions(options);
  const provider = await runProvider(options, checked.filePlan, progress);
  return { ...checked, cluster: clusterSpec(provider, options, checked) };
}

/** The cluster spec for a provider already chosen, from the checked inputs (no probing). */
export function clusterSpec(provider: ProviderName, options: RunOptions, checked: CheckedRun): ClusterSpec {
  switch (provider) {
    case "sim":
      return simSpec(options, checked);
    case "kind": {
      const kindConfig = checked.filePlan?.cluster.kindConfig;
      return {
        provider,
        name: options.clusterName ?? "rekindle",
        ...(options.kindImage !== undefined ? { image: options.kindImage } : {}),
        ...(kindConfig !== undefined ? { configPath: kindConfig } : {}),
        csiStorage: options.storageClass !== SHARED_STORAGE_CLASS,
      };
    }
    case "existing":
      return { provider, ...existingChoices(options) };
  }
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

/**
 * The sim's size: the scenario files', else the flags', else what the selected families'
 * scenarios need (minWorkers), else 3 workers; zones at most 2 unless asked.
 */
function simSpec(options: RunOptions, checked: CheckedRun): ClusterSpec {
  const { filePlan, suites, shard, profile } = checked;
  const fromFile = filePlan?.cluster;
  const needed =
    filePlan === undefined && options.workers === undefined
      ? scenarioWorkers(shardGroups(familyGroups(suites), shard), profile, options.grep)
      : undefined;
  const workers = fromFile?.workers ?? options.workers ?? needed ?? 3;
  const zones = fromFile?.zones ?? options.zones ?? Math.min(2, workers);
  const podsPerNode = fromFile?.podsPerNode ?? options.podsPerNode;
  return { provider: "sim", workers, zones, ...(podsPerNode !== undefined ? { podsPerNode } : {}) };
}

/** The existing provider's choices among the run's options, those given. */
function existingChoices(options: RunOptions): ExistingChoices {
  const { kubeconfig, context, storageClass, fenceConfig, controllerImage } = options;
  const { rails, nodeFaults, faultLocator, agent } = options;
  return {
    ...(kubeconfig !== undefined ? { kubeconfig } : {}),
    ...(context !== undefined ? { context } : {}),
    ...(storageClass !== undefined ? { storageClass } : {}),
    ...(fenceConfig !== undefined ? { fenceConfig } : {}),
    ...(controllerImage !== undefined ? { controllerImage } : {}),
    ...(rails !== undefined ? { rails } : {}),
    ...(nodeFaults !== undefined ? { nodeFaults } : {}),
    ...(faultLocator !== undefined ? { faultLocator } : {}),
    ...(agent !== undefined ? { agent } : {}),
  };
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

function kubeconfigChoice(options: RunOptions): KubeconfigChoice {
  return {
    ...(options.kubeconfig !== undefined ? { path: options.kubeconfig } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
  };
}
