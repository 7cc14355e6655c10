// What `rekindle run --shard k/n` (and `rekindle list --shard`) runs: the selection — the scenarios
// the families or files and --scenario choose, matched as mocha matches them — and this shard's
// share of it (lib/report/shard.ts deals it). Settled before any cluster starts, so a shard whose
// share is empty boots nothing.
import { RekindleError } from "../errors.js";
import { shardLabel, shardRecord, type ShardRecord, type ShardSpec } from "../report/shard.js";
import type { RunSummary } from "../report/summary.js";
import type { Progress } from "../util/progress.js";
import type { FilePlan } from "../scenario-file/plan.js";
import { fileScenarioName } from "../scenario-file/scenarios.js";
import { SCENARIOS, type SuiteFamily } from "../../suites/index.js";
import { FILE_GROUP_NAME, scenarioTestTitle, type ScenarioGroup } from "./suite.js";

interface NamedScenario {
  group: string;
  id: string;
  title: string;
}

/** Every scenario of the families or files, with the group mocha files it under. */
function namedScenarios(suites: readonly SuiteFamily[], plan: FilePlan | undefined): NamedScenario[] {
  return plan === undefined
    ? suites.flatMap((family) => SCENARIOS[family].map((s) => ({ group: family, id: s.id, title: s.title })))
    : plan.files.map((file) => ({ group: FILE_GROUP_NAME, ...fileScenarioName(file) }));
}

/** What a --scenario pattern is tested against: mocha's full title, "<group> <id> — <title>". */
function fullTitle(s: NamedScenario): string {
  return `${s.group} ${scenarioTestTitle(s)}`;
}

/** The scenario ids a run selects: every scenario of the families or files whose full title `grep` matches. */
export function selectedScenarioIds(
  suites: readonly SuiteFamily[],
  plan: FilePlan | undefined,
  grep: string | undefined,
): string[] {
  const pattern = grep === undefined ? undefined : new RegExp(grep);
  // Mocha tests a pattern against "<suite> <test>" (Test#fullTitle); the same here.
  return namedScenarios(suites, plan)
    .filter((s) => pattern === undefined || pattern.test(fullTitle(s)))
    .map((s) => s.id);
}

/**
 * Refuses a --scenario pattern that selects no scenario: such a run would start a cluster, run no
 * test and pass. The error shows what a pattern is matched against (anchors like `^id$` are the
 * usual surprise: the title starts with the family and goes on past the id).
 */
export function refuseEmptySelection(
  suites: readonly SuiteFamily[],
  plan: FilePlan | undefined,
  grep: string,
): void {
  if (selectedScenarioIds(suites, plan, grep).length > 0) return;
  const example = namedScenarios(suites, plan)[0];
  const from = plan === undefined ? `the families ${suites.join(", ")}` : "the scenario files";
  throw new RekindleError(
    "INVALID_INPUT",
    `the selection is empty: --scenario ${JSON.stringify(grep)} matches no scenario of ${from}`,
    {
      hint:
        `a pattern is matched anywhere in a scenario's full title, "<family> <id> — <title>"` +
        (example !== undefined
          ? ` (e.g. ${JSON.stringify(fullTitle(example))}: "${example.id} —" selects that one)`
          : "") +
        "; rekindle list shows the ids, and rekindle list --scenario REGEX what a pattern selects",
    },
  );
}

/** This shard's record for summary.json (none without --shard); an empty selection is bad input (no shard could run anything). */
export function planShard(
  spec: ShardSpec | undefined,
  suites: readonly SuiteFamily[],
  plan: FilePlan | undefined,
  grep: string | undefined,
): ShardRecord | undefined {
  if (spec === undefined) return undefined;
  const ids = selectedScenarioIds(suites, plan, grep);
  if (ids.length === 0)
    throw new RekindleError(
      "INVALID_INPUT",
      `--shard ${shardLabel(spec)}: the selection is empty${grep !== undefined ? ` (--scenario ${JSON.stringify(grep)} matches no scenario)` : ""}`,
      { hint: "rekindle list --scenario REGEX shows what a pattern selects" },
    );
  return shardRecord(ids, spec);
}

/** The groups cut to the shard's share (groups left empty dropped); all of them without --shard. */
export function shardGroups(groups: ScenarioGroup[], record: ShardRecord | undefined): ScenarioGroup[] {
  if (record === undefined) return groups;
  const share = new Set(record.scenarios);
  return groups
    .map((g) => ({ ...g, scenarios: g.scenarios.filter((s) => share.has(s.definition.id)) }))
    .filter((g) => g.scenarios.length > 0);
}

/** The banner's line for a shard. */
export function shardLine(record: ShardRecord): string {
  const share = record.scenarios.length;
  return `shard     ${shardLabel(record)}: ${share} of the ${record.selected} selected scenarios${share === 0 ? " — nothing to run, no cluster started" : ""}`;
}

/**
 * Records the shard (if any) on the summary and says so; true when its share is empty. Such a
 * shard starts nothing and passes: a CI matrix of more shards than scenarios stays green, and
 * `rekindle merge` gets every shard's summary.
 */
export function startShard(summary: RunSummary, shard: ShardRecord | undefined, progress: Progress): boolean {
  if (shard === undefined) return false;
  summary.shard = shard;
  progress.info(shardLine(shard));
  return shard.scenarios.length === 0;
}
