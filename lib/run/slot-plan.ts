// One --parallel cluster's part of the run's plan, as JSON: what the parent hands a cluster's
// process (parallel-slot-main.ts) instead of its flags. The process checks it on receipt and turns
// it back into the RunPlan its runner consumes: one sim cluster, no shard (the parent's queue hands
// out the share), no Allure HTML (the parent writes the run's). Scenario files go by path and are
// loaded again there, checked as the parent checked them.
import { isAbsolute } from "node:path";
import { RekindleError } from "../errors.js";
import type { SimClusterSpec } from "../cluster/cluster-spec.js";
import { timingProfile } from "../cluster/profiles.js";
import { checkFaultPhaseSpread } from "../fault/phase-spread.js";
import { planScenarioFiles } from "../scenario-file/plan.js";
import { suiteFamilies } from "../../suites/index.js";
import { TEST_LOGS, type TestLog } from "./run-flags.js";
import { checkPattern, checkRepeat, type RunPlan, type ScenarioFilesRequest } from "./run-plan.js";

export interface SlotPlan {
  /** The families to draw from (none with files). */
  suites: string[];
  /** The scenario files' paths as given, and --repeat if it was. */
  files?: ScenarioFilesRequest;
  /** The timing profile's name (scenario files add their knobs again). */
  profile: string;
  repeat: number;
  phaseSpreadMs: number;
  grep?: string;
  cluster: SimClusterSpec;
  /** This cluster's own report directory (absolute). */
  reportDir: string;
  testLog: TestLog;
}

/** The part of `plan` one cluster runs, on `cluster`, with its reports in `reportDir`. */
export function slotPlan(plan: RunPlan, cluster: SimClusterSpec, reportDir: string): SlotPlan {
  return {
    suites: [...plan.suites],
    ...(plan.files !== undefined ? { files: plan.files } : {}),
    profile: plan.profile.name,
    repeat: plan.repeat,
    phaseSpreadMs: plan.phaseSpreadMs,
    ...(plan.grep !== undefined ? { grep: plan.grep } : {}),
    cluster,
    reportDir,
    testLog: plan.testLog,
  };
}

/** A slot plan received over IPC, checked field by field; a malformed one is the harness's bug. */
export function readSlotPlan(value: unknown): SlotPlan {
  const v = record(value, "the slot plan");
  const files = v.files === undefined ? undefined : record(v.files, "files");
  const grep = optional(v.grep, "grep", isString);
  return {
    suites: field(v.suites, "suites", isStringList),
    ...(files !== undefined ? { files: filesRequest(files) } : {}),
    profile: field(v.profile, "profile", isString),
    repeat: field(v.repeat, "repeat", isCount),
    phaseSpreadMs: field(v.phaseSpreadMs, "phaseSpreadMs", isNumber),
    ...(grep !== undefined ? { grep } : {}),
    cluster: simCluster(record(v.cluster, "cluster")),
    reportDir: field(v.reportDir, "reportDir", (d): d is string => isString(d) && isAbsolute(d)),
    testLog: field(v.testLog, "testLog", (t): t is TestLog => TEST_LOGS.includes(t as TestLog)),
  };
}

/** The cluster's RunPlan from its slot plan, every value checked again as planRun checks it. */
export function slotRunPlan(slot: SlotPlan): RunPlan {
  const filePlan =
    slot.files === undefined
      ? undefined
      : planScenarioFiles(slot.files.paths, {
          provider: "sim",
          profile: slot.profile,
          ...(slot.files.repeat !== undefined ? { repeat: slot.files.repeat } : {}),
        });
  return {
    suites: slot.files === undefined ? suiteFamilies(slot.suites) : [],
    filePlan,
    files: slot.files,
    repeat: checkRepeat(slot.repeat),
    phaseSpreadMs: checkFaultPhaseSpread(slot.phaseSpreadMs),
    profile: filePlan?.profile ?? timingProfile(slot.profile),
    grep: slot.grep === undefined ? undefined : checkPattern(slot.grep),
    shard: undefined,
    cluster: slot.cluster,
    layout: { parallel: 1, byDefault: false, workersGiven: true },
    reportDir: slot.reportDir,
    keepCluster: false,
    allureHtml: false,
    allureHistory: undefined,
    testLog: slot.testLog,
  };
}

function filesRequest(files: Record<string, unknown>): ScenarioFilesRequest {
  const repeat = optional(files.repeat, "files.repeat", isCount);
  return {
    paths: field(files.paths, "files.paths", isStringList),
    ...(repeat !== undefined ? { repeat } : {}),
  };
}

function simCluster(cluster: Record<string, unknown>): SimClusterSpec {
  if (cluster.provider !== "sim") throw malformed("cluster.provider", cluster.provider);
  const workers = field(cluster.workers, "cluster.workers", isCount);
  const zones = field(cluster.zones, "cluster.zones", (z): z is number => isCount(z) && z <= workers);
  const podsPerNode = optional(cluster.podsPerNode, "cluster.podsPerNode", isCountOrZero);
  return { provider: "sim", workers, zones, ...(podsPerNode !== undefined ? { podsPerNode } : {}) };
}

function malformed(name: string, got: unknown): RekindleError {
  return new RekindleError(
    "HARNESS_FAILED",
    `rekindle run --parallel handed a cluster a malformed plan: ${name} is ${got === undefined ? "missing" : JSON.stringify(got)}`,
    { hint: "a bug in rekindle (lib/run/slot-plan.ts): report it", details: { field: name, got } },
  );
}

function field<T>(value: unknown, name: string, is: (v: unknown) => v is T): T {
  if (!is(value)) throw malformed(name, value);
  return value;
}

function optional<T>(value: unknown, name: string, is: (v: unknown) => v is T): T | undefined {
  return value === undefined ? undefined : field(value, name, is);
}

function record(value: unknown, name: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw malformed(name, value);
  return value as Record<string, unknown>;
}

const isString = (v: unknown): v is string => typeof v === "string";
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isCountOrZero = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isCount = (v: unknown): v is number => isCountOrZero(v) && v >= 1;
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
