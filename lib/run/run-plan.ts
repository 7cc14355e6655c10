// `rekindle run`'s inputs — its flags and the scenario files — parsed and checked once, here, into
// the RunPlan that the runner, the --parallel pool and its clusters consume: what runs, how often,
// on which timing profile, on which cluster (lib/cluster/cluster-spec.ts, one variant per
// provider), side by side or not, and where the reports go. Bad input is a RekindleError naming
// the flag and its valid forms, before any report directory, engine or cluster.
import { resolve } from "node:path";
import { RekindleError } from "../errors.js";
import { loadKubeconfig } from "../kube/kubeconfig-load.js";
import { checkFaultPhaseSpread } from "../fault/phase-spread.js";
import { chooseProvider } from "../cluster/create.js";
import type { ClusterSpec } from "../cluster/cluster-spec.js";
import { checkNodeImageChoice } from "../cluster/kind/node-image-choice.js";
import type { ProviderName } from "../cluster/provider.js";
import { timingProfile } from "../cluster/profiles.js";
import { simSizeFlags } from "../cluster/sim/boot/size-flags.js";
import { resolveAllureHistory } from "../report/allure-history.js";
import { parseShard } from "../report/shard.js";
import { checkProvider, planScenarioFiles, type FilePlan } from "../scenario-file/plan.js";
import { suiteFamilies } from "../../suites/index.js";
import { parseCount } from "../util/parse-count.js";
import { consoleProgress, type Progress } from "../util/progress.js";
import {
  checkParallelProvider,
  defaultLayout,
  parseParallel,
  type ParallelChoice,
} from "./parallel-count.js";
import { clusterSpec, type ClusterRequest } from "./plan-cluster.js";
import type { RunSelection, ScenarioFilesRequest } from "./run-selection.js";
import type { RunFlags, RunSettings, TestLog } from "./run-flags.js";
import { checkRunRails, railsRequest } from "./run-rails.js";
import { checkSimSize } from "./sim-size.js";
import { planShard, refuseEmptySelection, selectedScenarioIds } from "./shard-run.js";

/** How many clusters run the selection (lib/run/run-choice.ts dispatches on it). */
export interface RunLayout {
  /** 1: one cluster, serially; N or auto: that many sim clusters side by side (parallel-run.ts). */
  parallel: ParallelChoice;
  /** No --parallel was given: nothing was refused for it, and a selection one cluster runs as fast runs serially. */
  byDefault: boolean;
  /** --workers sizes every cluster: none of --parallel's is sized for a scenario's own needs. */
  workersGiven: boolean;
}

export type { RunSelection, ScenarioFilesRequest } from "./run-selection.js";

/** One run, planned. */
export interface RunPlan extends RunSelection {
  cluster: ClusterSpec;
  layout: RunLayout;
  /** --report-dir, absolute; undefined: reports/<run-id>. */
  reportDir: string | undefined;
  /** --keep-cluster: leave the cluster running afterwards. */
  keepCluster: boolean;
  /** Generate the Allure HTML report (not with --no-html). */
  allureHtml: boolean;
  /** --allure-history; undefined: the newest other run in the same reports root. */
  allureHistory: string | undefined;
  testLog: TestLog;
}

/**
 * The run's plan: every flag parsed and checked, the provider chosen (the files', the flag's, else
 * kind when it runs here, else sim), its cluster spec built and the layout settled. `settings`:
 * what is not a flag (RunSettings' defaults).
 */
export async function planRun(flags: RunFlags, settings: RunSettings = {}): Promise<RunPlan> {
  const progress: Progress = settings.progress ?? consoleProgress();
  const rails = railsRequest(flags);
  if (flags.image !== undefined) checkNodeImageChoice(flags.image);
  const size = simSizeFlags(flags);
  const parallel = flags.parallel === undefined ? undefined : parseParallel(flags.parallel);
  const request: ClusterRequest = {
    flags,
    size,
    ...(rails !== undefined ? { rails } : {}),
    ...(settings.agent !== undefined ? { agent: settings.agent } : {}),
  };
  const selection = planSelection(flags, request, settings);
  const keepCluster = flags["keep-cluster"] === true;
  if (parallel !== undefined && parallel !== 1) checkParallel(flags, parallel, selection);
  const provider = await runProvider(flags.provider, selection.filePlan, progress);
  const layout: RunLayout = {
    parallel: parallel ?? defaultLayout(provider, keepCluster),
    byDefault: parallel === undefined,
    workersGiven: size.workers !== undefined,
  };
  if (layout.parallel !== 1) refuseEmptyParallel(selection);
  return {
    ...selection,
    cluster: clusterSpec(provider, request, selection),
    layout,
    reportDir: flags["report-dir"] !== undefined ? resolve(flags["report-dir"]) : undefined,
    keepCluster,
    allureHtml: flags["no-html"] !== true,
    allureHistory: flags["allure-history"],
    testLog: settings.testLog ?? "stdout",
  };
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

/** The most runs of each scenario --repeat takes. */
export const MAX_REPEAT = 100;

/** Refuses a repeat count outside 1..MAX_REPEAT; the count, when it is one. */
export function checkRepeat(repeat: number): number {
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > MAX_REPEAT)
    throw RekindleError.invalidInput("repeat count", repeat, `a whole number from 1 to ${MAX_REPEAT}`);
  return repeat;
}

/** Every input that needs no provider probe, checked; throws the first bad one. */
function planSelection(flags: RunFlags, request: ClusterRequest, settings: RunSettings): RunSelection {
  const paths = flags.file ?? [];
  if (paths.length > 0 && (flags.suite?.length ?? 0) > 0)
    throw new RekindleError("INVALID_INPUT", "-f and --suite do not go together", {
      hint: "run scenario files (-f) or built-in families (--suite), one per command",
    });
  const shardSpec = flags.shard === undefined ? undefined : parseShard(flags.shard);
  const suites = paths.length > 0 ? [] : suiteFamilies(flags.suite);
  const repeatFlag =
    flags.repeat === undefined ? undefined : checkRepeat(parseCount("--repeat", flags.repeat));
  const phaseSpreadMs = checkFaultPhaseSpread(settings.faultPhaseSpreadMs);
  const files =
    paths.length > 0 ? { paths, ...(repeatFlag !== undefined ? { repeat: repeatFlag } : {}) } : undefined;
  const filePlan = files === undefined ? undefined : filePlanOf(files, flags);
  const profile = filePlan?.profile ?? timingProfile(flags.profile ?? "default");
  if (flags["allure-history"] !== undefined) resolveAllureHistory(flags["allure-history"]);
  checkClusterFlags(flags, request, filePlan);
  const grep = flags.scenario;
  if (grep !== undefined) refuseEmptySelection(suites, filePlan, checkPattern(grep));
  const shard = planShard(shardSpec, suites, filePlan, grep);
  return { suites, filePlan, files, repeat: repeatFlag ?? 1, phaseSpreadMs, profile, grep, shard };
}

/** The flags of one provider or another: each only where it applies, each well-formed. */
function checkClusterFlags(flags: RunFlags, request: ClusterRequest, filePlan: FilePlan | undefined): void {
  const provider = filePlan?.provider ?? flags.provider;
  // A kubeconfig or context that is not there is bad input, found before any report directory.
  if (provider === "existing")
    loadKubeconfig({
      ...(flags.kubeconfig !== undefined ? { path: flags.kubeconfig } : {}),
      ...(flags.context !== undefined ? { context: flags.context } : {}),
    });
  checkRunRails(
    {
      provider,
      profile: flags.profile,
      storageClass: flags["storage-class"],
      fenceConfig: flags["fence-config"],
      controllerImage: flags["controller-image"],
      rails: request.rails,
    },
    filePlan,
  );
  checkSimSize({ provider: flags.provider, ...request.size }, filePlan);
}

/** Refuses what --parallel N (N > 1, or auto) cannot do, before anything starts. */
function checkParallel(flags: RunFlags, choice: ParallelChoice, selection: RunSelection): void {
  checkParallelProvider(selection.filePlan?.provider ?? flags.provider, choice);
  if (flags["keep-cluster"] === true)
    throw new RekindleError("INVALID_INPUT", `--keep-cluster does not go with --parallel ${String(choice)}`, {
      hint: "--parallel starts one cluster per slot and tears each down; to keep a cluster, run without --parallel",
    });
}

/** Clusters side by side need something to run (a shard whose share is empty runs serially: it boots nothing). */
function refuseEmptyParallel(selection: RunSelection): void {
  const { suites, filePlan, grep, shard } = selection;
  if (shard?.scenarios.length === 0) return;
  const share = shard === undefined ? undefined : new Set(shard.scenarios);
  const ids = selectedScenarioIds(suites, filePlan, grep).filter((id) => share?.has(id) ?? true);
  if (ids.length === 0)
    throw new RekindleError("INVALID_INPUT", "--parallel: the selection is empty", {
      hint: "rekindle list --scenario REGEX shows what a pattern selects",
    });
}

/** The scenario files loaded and checked against the command line's provider, profile and repeat. */
function filePlanOf(files: ScenarioFilesRequest, flags: RunFlags): FilePlan {
  return planScenarioFiles(files.paths, {
    ...(flags.provider !== undefined ? { provider: flags.provider } : {}),
    ...(flags.profile !== undefined ? { profile: flags.profile } : {}),
    ...(files.repeat !== undefined ? { repeat: files.repeat } : {}),
  });
}

/** The provider: the scenario files' (checked against what it can do), else the command line's or the default. */
async function runProvider(
  requested: string | undefined,
  filePlan: FilePlan | undefined,
  progress: Progress,
): Promise<ProviderName> {
  if (filePlan === undefined) return chooseProvider(requested, progress);
  const provider = filePlan.provider ?? (await chooseProvider(requested, progress));
  checkProvider(filePlan.files, provider);
  return provider;
}
