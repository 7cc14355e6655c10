// Builds the mocha tree of a run from the scenario definitions (suites/): one mocha suite per
// family, one test per scenario, repeated as the run asks, each run recorded for the reports. A
// scenario the provider cannot run is skipped with the provider's stated reason (printed, and
// listed under "skipped" in summary.json and JUnit).
import { randomBytes } from "node:crypto";
import Mocha from "mocha";
import { missingCapabilities, type ClusterUnderTest } from "../cluster/provider.js";
import type { ScenarioRun, SummaryExpected } from "../report/summary.js";
import { runScenario, scenarioNeeds, type ScenarioDefinition } from "../scenario/harness.js";
import { summaryExpected } from "../scenario/verdict.js";
import { sourceOrCompiled } from "../util/project-files.js";
import type { Progress } from "../util/progress.js";
import { SCENARIOS, type SuiteFamily } from "../../suites/index.js";
import { VOLUME_WORKLOAD_ID } from "../workloads/node-loss-fixtures.js";

export interface RecordedScenario {
  id: string;
  runs: ScenarioRun[];
  expected: SummaryExpected[];
  /** SVG of the first run's timeline (later runs are in Allure). */
  chart: string;
}

/** What the tests of a run share: the cluster under test, and where each scenario run is recorded. */
export interface RunContext {
  cluster: ClusterUnderTest;
  repeat: number;
  /** RunPlan.phaseSpreadMs: a random wait below this before each run's first fault. */
  phaseSpreadMs: number;
  progress: Progress;
  signal: AbortSignal;
  scenarios: Map<string, RecordedScenario>;
  /** Scenarios the provider cannot run, with the reason. */
  skipped: Map<string, string>;
}

/** The built-in scenarios that deploy the StatefulSet with a volume (its milestones are "statefulset:…"). */
function deploysVolume(definition: ScenarioDefinition): boolean {
  const builtIn = Object.values(SCENARIOS).some((family) => family.includes(definition));
  return builtIn && definition.workloads("ns").some((w) => w.id === VOLUME_WORKLOAD_ID);
}

/** Why the cluster cannot run this scenario; undefined when it can. */
export function skipReason(cluster: ClusterUnderTest, definition: ScenarioDefinition): string | undefined {
  const capable = missingCapabilities(cluster, scenarioNeeds(definition));
  if (!capable.ok) {
    const [first] = capable.missing;
    return (
      first && `${cluster.provider} provider cannot inject "${first.capability}" faults: ${first.reason}`
    );
  }
  if (cluster.volumesStayPut !== undefined && deploysVolume(definition))
    return `its StatefulSet's volume must be able to follow the pod to another node: ${cluster.volumesStayPut}`;
  return undefined;
}

/** Why the cluster has too few workers for the scenario (minWorkers); undefined when it has enough. */
export async function workerShortfall(
  cluster: ClusterUnderTest,
  definition: ScenarioDefinition,
): Promise<string | undefined> {
  const needed = definition.minWorkers?.(cluster.profile);
  if (needed === undefined) return undefined;
  const workers = (await cluster.workerNodes()).length;
  if (workers >= needed) return undefined;
  const how =
    cluster.provider === "sim"
      ? ` (on one cluster; side by side, without --parallel 1 or --keep-cluster, it gets a cluster of its size; or run it apart, e.g. --suite ${definition.id.split("/")[0] ?? ""}: rekindle run then sizes the sim to it; or --workers ${needed})`
      : "";
  return `it needs ${needed} workers at profile ${cluster.profile.name}, the cluster has ${workers}${how}`;
}

/** A namespace name unique to this run of the scenario. */
export function scenarioNamespace(id: string, run: number): string {
  const slug = id.replace(/[^a-z0-9]+/g, "-").slice(0, 40);
  return `${slug}-${run}-${randomBytes(2).toString("hex")}`;
}

function record(
  context: RunContext,
  id: string,
  run: ScenarioRun,
  expected: SummaryExpected[],
  chart: string,
) {
  const entry = context.scenarios.get(id) ?? { id, runs: [], expected, chart };
  entry.runs.push(run);
  context.scenarios.set(id, entry);
}

/** A group of scenarios run as one mocha suite: a built-in family, or the scenarios of files. */
export interface ScenarioGroup {
  name: string;
  /** The file the suite's tests come from (reporters expect one). */
  file: string;
  scenarios: readonly { definition: ScenarioDefinition; repeat?: number }[];
}

/** The mocha suite name of the scenarios of files (a family's suite is named after the family). */
export const FILE_GROUP_NAME = "scenario files";

/** A scenario's mocha test title; `--scenario` matches "<suite name> <test title>" (mocha's full title). */
export function scenarioTestTitle(scenario: { id: string; title: string }): string {
  return `${scenario.id} — ${scenario.title}`;
}

function scenarioTest(
  context: RunContext,
  definition: ScenarioDefinition,
  repeat = context.repeat,
): Mocha.Test {
  return new Mocha.Test(scenarioTestTitle(definition), async function (this: Mocha.Context) {
    const reason =
      skipReason(context.cluster, definition) ?? (await workerShortfall(context.cluster, definition));
    if (reason !== undefined) {
      context.skipped.set(definition.id, reason);
      context.progress.info(`${definition.id}: skipped — ${reason}`);
      this.skip();
    }
    const failures: string[] = [];
    for (let i = 1; i <= repeat; i++) {
      const result = await runScenario(definition, {
        cluster: context.cluster,
        namespace: scenarioNamespace(definition.id, i),
        progress: context.progress,
        signal: context.signal,
        faultPhaseSpreadMs: context.phaseSpreadMs,
      });
      record(context, definition.id, result, summaryExpected(result.expected, result.checks), result.chart);
      if (result.outcome === "failed") failures.push(`run ${i}: ${result.error ?? "failed"}`);
    }
    if (failures.length > 0) throw new Error(failures.join("\n\n"));
  });
}

/** The built-in families as scenario groups. */
export function familyGroups(families: readonly SuiteFamily[]): ScenarioGroup[] {
  return families.map((family) => ({
    name: family,
    file: sourceOrCompiled(import.meta.url, `../../suites/${family}`),
    scenarios: SCENARIOS[family].map((definition) => ({ definition })),
  }));
}

/** Adds one mocha suite per group to `root`, its tests bound to `context`. */
export function addScenarioSuites(
  root: Mocha.Suite,
  groups: readonly ScenarioGroup[],
  context: RunContext,
): void {
  for (const group of groups) {
    const suite = Mocha.Suite.create(root, group.name);
    // Reporters expect every suite and test to come from a file (allure-mocha stops the run without one).
    suite.file = group.file;
    suite.timeout(0);
    for (const { definition, repeat } of group.scenarios) {
      const test = scenarioTest(context, definition, repeat);
      test.file = suite.file;
      suite.addTest(test);
    }
  }
}
