// `rekindle run` and `rekindle list` (`compare` and `trend` are in compare-commands.ts).
import { parseOptions } from "../util/parse-options.js";
import { CATALOGUE_PROFILE_NAMES, timingProfile, TIMING_PROFILE_NAMES } from "../cluster/profiles.js";
import { nominalWindows, type ExpectedMilestone } from "../expect/model.js";
import { SCENARIOS, suiteFamilies, type SuiteFamily } from "../../suites/index.js";
import { PROVIDERS, SUITE_FAMILIES } from "../run/runner.js";
import { MAX_PARALLEL } from "../run/parallel-count.js";
import { runPlanned } from "../run/run-choice.js";
import { checkPattern, planRun } from "../run/run-plan.js";
import type { TestLog } from "../run/run-flags.js";
import { agentFaults } from "./existing-agent.js";
import type { k8s } from "../kube/client.js";
import { consoleProgress, progressLevel } from "../util/progress.js";
import { OUTPUT_OPTION, OUTPUT_USAGE, outputFormat, writeJson, type OutputFormat } from "./args.js";
import { scenarioListJson } from "./list-json.js";
import { faultWindow, listExpectationInputs, relativeWindow, scenarioCatalogue } from "./catalogue.js";
import { finishRun } from "./run-result.js";
import { planScenarioFiles } from "../scenario-file/plan.js";
import { listedFileScenarios } from "../scenario-file/scenarios.js";
import type { FilePlan } from "../scenario-file/plan.js";
import { parseShard } from "../report/shard.js";
import { planShard, refuseEmptySelection, selectedScenarioIds, shardLine } from "../run/shard-run.js";
import { RekindleError } from "../errors.js";

export const RUN_USAGE = `rekindle run [--provider ${PROVIDERS.join("|")}] [--suite <family>]... [-f FILE|DIR]... [--profile ${TIMING_PROFILE_NAMES.join("|")}]
             [--scenario REGEX] [--shard k/n] [--parallel N|auto] [--repeat N] [--fail-on-skip]
             [--report-dir D] [--keep-cluster] [--no-html] [--allure-history DIR]
             [--cluster-name N] [--image auto|kindest|rekindle|REF] [--kubeconfig F] [--context C] ${OUTPUT_USAGE}
             [--allow-faults (--node-selector k=v | --nodes a,b) [--max-faulted-nodes N] [--fault-deadline D]]
             [--storage-class SC] [--fence-config FILE [--controller-image IMAGE]]
             [--workers N] [--zones Z] [--pods-per-node P]
      run the conformance suites; reports in reports/<run-id>/ (summary.json, junit.xml, signoff.html,
      signoff.md, charts/, allure-report/), written also when the harness breaks; -o json prints
      {reportDir, summary} instead of the lines; exit 0 passed, 1 a scenario failed (or, with
      --fail-on-skip, was skipped), 2 bad input, 3 the harness or its infrastructure failed,
      130 interrupted; the last line: scenarios: N passed, N failed[, N skipped]
      --fail-on-skip: a run that skipped a scenario (a fault the provider cannot inject, a cluster
                too small) exits 1; without it, skips are listed and do not fail the run
      families: ${SUITE_FAMILIES.join(", ")}
      --scenario REGEX: the scenarios whose full title "<family> <id> — <title>" the pattern
                matches anywhere ("node-loss/controller —" selects one); one that selects nothing exits 2
      --shard k/n: run shard k of n of the selected scenarios (a CI matrix: one job per k, then
                rekindle merge); the selection (--suite/-f, --scenario) is sorted by id and dealt
                round-robin, so a scenario's shard depends only on the selection and n, never on the
                provider or machine (rekindle list --shard k/n shows a share); a shard whose share is
                empty starts no cluster, writes its reports and exits 0; an empty selection exits 2
      --parallel N|auto: sim only: run the selection on N sim clusters at once (1..${MAX_PARALLEL}), each
                taking the next scenario, longest expected first, whenever it is free; one set of
                reports as a serial run writes (each cluster's own under cluster-<k>/); auto (the
                default on the sim): from the cores, free memory and the selection's lengths
                (docs/user.md), one cluster running serially; 1: serially on one cluster;
                scenarios that need more than 3 workers (zone-disruption) get clusters of their
                own, sized for them (serially they skip); with --shard, the shard's share runs in
                parallel; --keep-cluster runs serially
      -f, --file: scenario files (docs/scenario-files.md) or directories of them, instead of the
                families; their spec.cluster (provider, profile, knobs) applies, and must agree with
                --provider/--profile when both are given; --repeat overrides each file's repeat
      defaults: --provider kind when the kind CLI and Docker/Podman answer, else sim; every suite;
                --profile default; --repeat 1; kind --cluster-name rekindle (reused if it exists);
                kind --image $REKINDLE_KIND_IMAGE or auto (kindest/node if it can be pulled, else
                rekindle's offline image, built once: see rekindle kind build-image);
                existing --kubeconfig: $KUBECONFIG's files merged, else ~/.kube/config; its current --context;
                --allure-history: the newest other run's allure-report/history in the same reports root
      --workers, --zones, --pods-per-node: sim only: the cluster's size, as rekindle sim up's
                (default 3 workers in 2 zones, no filler pods); a scenario file's spec.cluster
                workers/zones/podsPerNode must agree; past 100 workers use --profile large
      --allow-faults: existing only: node faults through rekindle's node agent, on the nodes the
                label selector (--node-selector; --nodes-selector is its old spelling, still
                taken) or the names (--nodes) choose (never a control-plane node, at most
                --max-faulted-nodes, default 1); a preflight prints what, where and until when;
                refused while the cluster's fault journal holds another run's live fault;
                --fault-deadline: when a fault with no duration of its own is reverted at the
                latest (default 1h; at least the profile's grace period + unreachable toleration
                + 1m, at most 1h)
      --storage-class: the StorageClass of the scenarios' StatefulSet volume; kind: rekindle-csi (the
                default: attached to its node, so node loss waits for the detach) or rekindle-shared
                (nothing to attach; docs/user.md); existing: default the cluster's default
                class; one that keeps each volume on one node (local-path, local volumes) is
                refused, and as the default it skips the scenarios with a volume
      --fence-config: existing with --allow-faults: a fence configuration in the controller's format
                (docs/controller.md: Redfish, fence agents, webhook) that reaches the allowed
                nodes' machines; the recovery controller's scenarios then run, walled to those
                nodes (--node-selector); a fenced node is powered on before its faults are reverted
      --controller-image: existing: the controller image the nodes can run, for the scenarios that
                apply deploy/controller/ (default: the image deployment.yaml names)`;
export const LIST_USAGE = `rekindle list [--profile ${TIMING_PROFILE_NAMES.join("|")}] [--suite <family>]... [-f FILE|DIR]... [--scenario REGEX] [--shard k/n]
              ${OUTPUT_USAGE} [--markdown]
      the scenarios and their expected timelines (as on the sim provider); with -f, the scenario
      files' windows derived from their workloads' specs (each workload assumed to lose one pod
      to the fault; a run refines this once it sees where the pods are); -o json prints them as
      {profile, scenarios: [{id, family, title, requires, note?, milestones}]}; --markdown prints the
      docs/scenarios.md page (every profile unless --profile); --scenario and --shard list what
      rekindle run with the same flags runs`;

export async function runCommandLine(args: string[], signal: AbortSignal): Promise<number> {
  const { values } = parseOptions(
    {
      args,
      options: {
        provider: { type: "string" },
        suite: { type: "string", multiple: true },
        file: { type: "string", short: "f", multiple: true },
        profile: { type: "string" },
        repeat: { type: "string" },
        "report-dir": { type: "string" },
        "keep-cluster": { type: "boolean", default: false },
        "no-html": { type: "boolean", default: false },
        "allure-history": { type: "string" },
        scenario: { type: "string" },
        shard: { type: "string" },
        parallel: { type: "string" },
        "cluster-name": { type: "string" },
        image: { type: "string" },
        kubeconfig: { type: "string" },
        context: { type: "string" },
        "allow-faults": { type: "boolean", default: false },
        "node-selector": { type: "string" },
        "nodes-selector": { type: "string" },
        "fail-on-skip": { type: "boolean", default: false },
        nodes: { type: "string" },
        "max-faulted-nodes": { type: "string" },
        "fault-deadline": { type: "string" },
        "storage-class": { type: "string" },
        "fence-config": { type: "string" },
        "controller-image": { type: "string" },
        workers: { type: "string" },
        zones: { type: "string" },
        "pods-per-node": { type: "string" },
        ...OUTPUT_OPTION,
      },
      strict: true,
    },
    { aliases: RUN_ALIASES },
  );
  // Bad input fails before anything starts (no report directory, no engine, no cluster).
  const output = outputFormat(values.output);
  const plan = await planRun(values, {
    testLog: testLog(output),
    agent: (kc: k8s.KubeConfig) => agentFaults(kc, consoleProgress()),
  });
  const result = await runPlanned(plan, { signal });
  return finishRun(result, output, { failOnSkip: values["fail-on-skip"] });
}

/** Where the per-test lines go: nowhere under -q, stderr when stdout is JSON, else stdout. */
function testLog(output: OutputFormat): TestLog {
  if (progressLevel() === "quiet") return "none";
  return output === "json" ? "stderr" : "stdout";
}

/** run's older spellings, old → new: --nodes-selector was the selector's name before every command said --node-selector. */
export const RUN_ALIASES: Readonly<Record<string, string>> = { "nodes-selector": "node-selector" };

function printScenario(
  id: string,
  title: string,
  requires: readonly string[],
  expected: ExpectedMilestone[],
  note?: string,
): void {
  process.stdout.write(`${id}\n  ${title}\n`);
  if (note !== undefined) process.stdout.write(`  note: ${note}\n`);
  if (requires.length > 0) process.stdout.write(`  needs: ${requires.join(", ")} faults\n`);
  const anchors: Record<string, number> = { "fault-injected": 0 };
  const nominal = nominalWindows(expected, anchors);
  for (const w of nominal) {
    const why = expected.find((e) => e.name === w.name)?.why ?? "";
    const window = faultWindow(w.minMs, w.maxMs);
    process.stdout.write(`    ${w.name.padEnd(50)} ${window.padEnd(16)} ${why}\n`);
  }
  for (const e of expected.filter((x) => !nominal.some((w) => w.name === x.name))) {
    const window = relativeWindow(e.minMs, e.maxMs);
    process.stdout.write(`    ${e.name.padEnd(50)} ${window.padEnd(16)} after ${e.after}: ${e.why}\n`);
  }
  process.stdout.write("\n");
}

export async function listCommand(args: string[]): Promise<number> {
  const { values } = parseOptions({
    args,
    options: {
      profile: { type: "string" },
      suite: { type: "string", multiple: true },
      file: { type: "string", short: "f", multiple: true },
      ...OUTPUT_OPTION,
      markdown: { type: "boolean", default: false },
      scenario: { type: "string" },
      shard: { type: "string" },
    },
    strict: true,
  });
  const format = outputFormat(values.output);
  const selection = listSelection(values.scenario, values.shard, values.markdown);
  if (values.file !== undefined) return listFiles(values.file, values.profile, format, selection);
  const profile = timingProfile(values.profile ?? "default");
  const families = suiteFamilies(values.suite);
  const chosen = selection.ids(families, undefined);
  if (values.markdown) {
    // The catalogue page (docs/scenarios.md): every profile unless one is named.
    const profiles = values.profile === undefined ? CATALOGUE_PROFILE_NAMES.map(timingProfile) : [profile];
    process.stdout.write(scenarioCatalogue({ profiles, families }));
    return 0;
  }
  // Windows as on the sim provider; kind differs only in pod start and attach latency.
  const inputs = listExpectationInputs(profile);
  if (format === "json") {
    const list = scenarioListJson(profile.name, families, inputs);
    writeJson({ ...list, scenarios: list.scenarios.filter((s) => chosen?.has(s.id) ?? true) });
    return 0;
  }
  process.stdout.write(
    `expected timelines, profile ${profile.name}; times from the fault (or after the named milestone)\n\n`,
  );
  for (const family of families) {
    for (const scenario of SCENARIOS[family].filter((s) => chosen?.has(s.id) ?? true)) {
      printScenario(
        scenario.id,
        scenario.title,
        scenario.requires,
        scenario.expected(inputs),
        scenario.note?.(inputs),
      );
    }
  }
  return 0;
}

/** `rekindle list -f`: each file's windows, derived from its workloads, as on the sim provider. */
async function listFiles(
  paths: string[],
  profileName: string | undefined,
  format: "text" | "json",
  selection: ListSelection,
): Promise<number> {
  const plan = planScenarioFiles(paths, profileName !== undefined ? { profile: profileName } : {});
  const inputs = listExpectationInputs(plan.profile);
  const chosen = selection.ids([], plan);
  const listed = (await listedFileScenarios(plan, inputs)).filter((s) => chosen?.has(s.id) ?? true);
  if (format === "json") {
    writeJson({
      profile: plan.profile.name,
      scenarios: listed.map((s) => ({
        id: s.id,
        file: s.file,
        title: s.title,
        requires: s.requires,
        budgetsExpectedNever: s.budgetsExpectedNever,
        milestones: nominalWindows(s.expected).map((w) => ({
          ...w,
          why: s.expected.find((e) => e.name === w.name)?.why ?? "",
        })),
      })),
    });
    return 0;
  }
  process.stdout.write(
    `expected timelines, profile ${plan.profile.name}${plan.cluster.knobs ? " with the files' knobs" : ""}; times from the fault\n\n`,
  );
  for (const s of listed) {
    const never = s.budgetsExpectedNever;
    const note =
      never.length > 0
        ? `budgets that cannot be met, reported missed when run: ${never.join("; ")}`
        : undefined;
    printScenario(s.id, `${s.title} (${s.file})`, s.requires, s.expected, note);
  }
  return 0;
}

/** What `list --scenario/--shard` keeps: the ids `rekindle run` with the same flags would run (undefined: all). */
interface ListSelection {
  ids(families: readonly SuiteFamily[], plan: FilePlan | undefined): Set<string> | undefined;
}

function listSelection(
  grep: string | undefined,
  shard: string | undefined,
  markdown: boolean,
): ListSelection {
  if (grep === undefined && shard === undefined) return { ids: () => undefined };
  if (markdown)
    throw new RekindleError(
      "INVALID_INPUT",
      "--markdown lists every scenario: --scenario and --shard do not apply",
      {
        hint: "drop --scenario/--shard, or --markdown",
      },
    );
  const spec = shard === undefined ? undefined : parseShard(shard);
  if (grep !== undefined) checkPattern(grep);
  return {
    ids: (families, plan) => {
      if (grep !== undefined) refuseEmptySelection(families, plan, grep);
      const record = planShard(spec, families, plan, grep);
      if (record !== undefined) {
        process.stderr.write(`${shardLine(record).replace(/\s+/, " ")}\n`);
        return new Set(record.scenarios);
      }
      return new Set(selectedScenarioIds(families, plan, grep));
    },
  };
}
