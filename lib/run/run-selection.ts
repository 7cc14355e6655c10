// The part of a run's plan that needs no provider: what runs, how often, on which timing profile
// (run-plan.ts builds it; plan-cluster.ts sizes the sim from it).
import type { TimingProfile } from "../cluster/profiles.js";
import type { ShardRecord } from "../report/shard.js";
import type { FilePlan } from "../scenario-file/plan.js";
import type { SuiteFamily } from "../../suites/index.js";

/** What runs, how often and how: the part of the plan that needs no provider. */
export interface RunSelection {
  /** The built-in families; none when scenario files are given. */
  suites: SuiteFamily[];
  /** The scenario files (-f) loaded and checked; undefined: the families run. */
  filePlan: FilePlan | undefined;
  /** -f's paths and --repeat as given (a --parallel cluster loads them again); undefined: no files. */
  files: ScenarioFilesRequest | undefined;
  /** --repeat, default 1 (summary.json's `repeat` with files: the most any file asks for). */
  repeat: number;
  /** A random wait below this (ms) before each run's first fault; 0: none. */
  phaseSpreadMs: number;
  /** --profile, or the scenario files' (with their knobs). */
  profile: TimingProfile;
  /** --scenario: only the scenarios whose full title this matches; undefined: all. */
  grep: string | undefined;
  /** --shard: this shard's share of the selection; undefined: the whole selection. */
  shard: ShardRecord | undefined;
}

export interface ScenarioFilesRequest {
  paths: string[];
  /** --repeat, overriding every file's own; undefined: each file's. */
  repeat?: number;
}
