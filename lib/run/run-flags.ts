// `rekindle run`'s flags as the command line gives them (parseArgs' values: strings, lists,
// switches), unchecked; planRun (run-plan.ts) parses and checks every one of them into the
// RunPlan. What is not a flag of the run — where its test lines go, the benchmark's phase spread,
// the node agent the CLI wires in — comes beside them as RunSettings.
import type { ExistingAgent } from "../cluster/existing/cluster.js";
import type { Progress } from "../util/progress.js";
import type { RailsFlags } from "./run-rails.js";

/** The flags of `rekindle run` (lib/cli/run-commands.ts's RUN_USAGE says what each does). */
export interface RunFlags extends RailsFlags {
  /** kind, sim or existing. Default: kind when the kind CLI and a container engine answer, else sim. */
  provider?: string | undefined;
  /** Suite families (--suite); default all (none when scenario files are given). */
  suite?: string[] | undefined;
  /** Scenario files or directories (-f): run their scenarios instead of the built-in families. */
  file?: string[] | undefined;
  /** Timing profile; default "default" (upstream numbers), or the scenario files'. */
  profile?: string | undefined;
  /** Runs of each scenario, 1 to 100; default 1 (with -f: each file's own). */
  repeat?: string | undefined;
  /** Default reports/<run-id>. */
  "report-dir"?: string | undefined;
  /** Leave the cluster running afterwards (prints how to reach and stop it). Default false. */
  "keep-cluster"?: boolean | undefined;
  /** Skip the Allure HTML report (it needs Java). Default false. */
  "no-html"?: boolean | undefined;
  /** A previous run's report directory, its allure-report/ or allure-report/history/. Default: the newest other run's. */
  "allure-history"?: string | undefined;
  /** Only scenarios whose full title this regular expression matches. Default: all. */
  scenario?: string | undefined;
  /** "k/n": shard k of n of the selection (lib/report/shard.ts deals it). Default: the whole selection. */
  shard?: string | undefined;
  /** "N" or "auto": sim clusters side by side. Default: auto on the sim unless the cluster is kept, else 1. */
  parallel?: string | undefined;
  /** kind: the cluster's name, reused when it exists. Default "rekindle". */
  "cluster-name"?: string | undefined;
  /** kind: node image choice for a new cluster (see startKindCluster). Default $REKINDLE_KIND_IMAGE or "auto". */
  image?: string | undefined;
  /** existing: default $KUBECONFIG or ~/.kube/config, and its current context. */
  kubeconfig?: string | undefined;
  context?: string | undefined;
  /** existing, or kind's two classes: the StorageClass of the scenarios' volume. */
  "storage-class"?: string | undefined;
  /** existing with --allow-faults: the controller's fence configuration. */
  "fence-config"?: string | undefined;
  /** existing: the controller image the nodes can run. Default: deployment.yaml's. */
  "controller-image"?: string | undefined;
  /** sim: workers, zones and filler pods per shared-kwok worker. Default 3, 2, 0 (or the files'). */
  workers?: string | undefined;
  zones?: string | undefined;
  "pods-per-node"?: string | undefined;
}

/** Where mocha's per-test lines go: stdout, stderr (stdout carries `-o json`), or nowhere (`-q`). */
export type TestLog = "stdout" | "stderr" | "none";

export const TEST_LOGS: readonly TestLog[] = ["stdout", "stderr", "none"];

/** What a run takes besides its flags. */
export interface RunSettings {
  /** Default "stdout". */
  testLog?: TestLog;
  /**
   * A random wait below this (ms) before each run's first fault (fault/phase-spread.ts), 0 to
   * 60000; bench/recovery.ts's --phase-spread. Default 0.
   */
  faultPhaseSpreadMs?: number;
  /** Finds rekindle's node agent, for an existing cluster with --allow-faults (the CLI wires lib/agent/ in). Default: none. */
  agent?: ExistingAgent;
  /** Where the provider choice is said. Default: the console. */
  progress?: Progress;
}
