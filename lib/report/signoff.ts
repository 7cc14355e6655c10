// reports/<run>/signoff.html and signoff.md: one page a release can be signed on. What made the
// run (versions, images, every knob), each scenario's verdict and what it measured, every expected
// window against the measured time, every budget (a scenario file's absolute objectives) against
// what was measured, and the sha256 of the summary.json it summarises.
// The HTML is self-contained (inline CSS, the charts as inline SVG); the Markdown has the same
// facts but the charts, and is appended to $GITHUB_STEP_SUMMARY when that is set.
import { createHash } from "node:crypto";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorMessage } from "../errors.js";
import type { ComponentVersion, ImageIdentity, RunEnvironment } from "./environment.js";
import { scenarioFigure } from "./scenario-figure.js";
import type {
  BudgetRow,
  Fact,
  ScenarioSignoff,
  SignoffFacts,
  WindowRow,
  WindowStatus,
} from "./signoff-facts.js";
import { signoffHtml } from "./signoff-html.js";
import { signoffMarkdown } from "./signoff-md.js";
import { BUDGET_LABELS } from "../expect/budgets.js";
import { shardLabel } from "./shard.js";
import type { RunSummary, ScenarioSummary, SummaryBudget, SummaryExpected } from "./summary-types.js";

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

export function sha256Hex(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function windowRow(expected: SummaryExpected, atMs: number | undefined): WindowRow {
  const measured = atMs === undefined ? "—" : seconds(atMs);
  if (expected.maxMs === null) {
    return {
      milestone: expected.name,
      window: "must not happen",
      measured,
      status: atMs === undefined ? "absent as required" : "HAPPENED",
    };
  }
  const status: WindowStatus =
    atMs === undefined
      ? "missing"
      : atMs < expected.minMs
        ? "early"
        : atMs > expected.maxMs
          ? "late"
          : "within";
  return {
    milestone: expected.name,
    window: `${seconds(expected.minMs)}–${seconds(expected.maxMs)}`,
    measured,
    status,
  };
}

function budgetRow(budget: SummaryBudget, runs: number): BudgetRow {
  const missed = runs > 1 ? `MISSED in ${budget.missedRuns} of ${runs} runs` : "MISSED";
  return {
    workload: budget.workload,
    budget: BUDGET_LABELS[budget.budget],
    limit: budget.limit,
    measured: runs > 1 ? `${budget.measured} (worst of ${runs} runs)` : budget.measured,
    verdict: budget.passed ? "met" : missed,
  };
}

function scenarioSignoff(scenario: ScenarioSummary): ScenarioSignoff {
  const at = new Map(scenario.milestones.map((m) => [m.name, m.atMs]));
  return {
    id: scenario.id,
    verdict: scenario.outcome === "passed" ? "PASS" : "FAIL",
    figure: scenarioFigure(scenario),
    windows: scenario.expected.map((e) => windowRow(e, at.get(e.name))),
    budgets: (scenario.budgets ?? []).map((b) => budgetRow(b, scenario.runs.length)),
    ...(scenario.error !== undefined ? { error: scenario.error } : {}),
  };
}

function version(component: ComponentVersion): string {
  return `${component.version ?? "unknown"} (${component.source})`;
}

function image(identity: ImageIdentity): string {
  if (identity.reference === null && identity.digest === null) return `none (${identity.source})`;
  return `${identity.reference ?? "unknown"} @ ${identity.digest ?? "unknown digest"} (${identity.source})`;
}

function versionFacts(summary: RunSummary, env: RunEnvironment | undefined): Fact[] {
  if (env === undefined) return [["environment", "not recorded (a summary of schema 1)"]];
  const build = env.rekindle;
  const dirty = build.gitDirty === null ? "" : build.gitDirty ? " (tree dirty)" : " (tree clean)";
  return [
    ["rekindle", `${build.version}, git ${build.gitSha ?? "unknown"}${dirty}`],
    ["provider", `${summary.provider}${env.cluster !== null ? `: ${env.cluster}` : ""}`],
    ["profile", summary.profile],
    ["node image", image(env.nodeImage)],
    ["kube-apiserver", version(env.kubernetes.apiserver)],
    ["kube-controller-manager", version(env.kubernetes.controllerManager)],
    ["kube-scheduler", version(env.kubernetes.scheduler)],
    ["kubelet", version(env.kubernetes.kubelet)],
    ["kube-proxy", version(env.kubernetes.kubeProxy)],
    [
      "controller image",
      env.controllerImage === null ? "did not run in-cluster" : image(env.controllerImage),
    ],
  ];
}

/** Every timing knob, nested objects flattened to dotted names (controller.unhealthyAfterMs). */
export function flattenKnobs(value: object, prefix = ""): Fact[] {
  return Object.entries(value).flatMap(([key, v]): Fact[] =>
    typeof v === "object" && v !== null
      ? flattenKnobs(v as object, `${prefix}${key}.`)
      : [[`${prefix}${key}`, String(v)]],
  );
}

/** The profile's knobs, then (existing provider) each knob read from the cluster or assumed, and where. */
function knobFacts(env: RunEnvironment): Fact[] {
  const sources: Fact[] = (env.knobSources ?? []).map((k) => [k.name, `${k.value} (${k.source}: ${k.from})`]);
  return [...flattenKnobs(env.timing), ...sources];
}

function hostFactsOf(env: RunEnvironment | undefined): Fact[] {
  if (env === undefined) return [];
  const h = env.host;
  return [
    ["cores", String(h.cores)],
    ["memory", `${(h.memoryBytes / 2 ** 30).toFixed(1)} GiB`],
    ["kernel", `${h.platform} ${h.kernel} (${h.arch})`],
    ["Node.js", h.nodejs],
  ];
}

/** Where the run's scenarios came from when it was a shard, or shards merged (none for a whole run). */
function shardFacts(summary: RunSummary): Fact[] {
  const { shard, merged } = summary;
  if (shard !== undefined)
    return [
      ["shard", `${shardLabel(shard)}: ${shard.scenarios.length} of ${shard.selected} selected scenarios`],
    ];
  if (merged === undefined) return [];
  return [
    ["merged from", `${merged.count} shards of ${merged.selected} selected scenarios`],
    ...merged.shards.map((s): Fact => {
      const differs =
        s.environmentDiffers.length > 0 ? `; differs in ${s.environmentDiffers.join(", ")}` : "";
      return [
        `shard ${s.index}/${merged.count}`,
        `run ${s.runId} (${s.source}), share of ${s.scenarios.length}${differs}`,
      ];
    }),
  ];
}

function verdictOf(summary: RunSummary, passed: number, failed: number): string {
  const broke = summary.error ?? undefined;
  if (broke !== undefined) return broke.code === "ABORTED" ? "INTERRUPTED" : "HARNESS FAILED";
  if (summary.shard?.scenarios.length === 0) return "NOTHING TO RUN";
  return failed > 0 || passed === 0 ? "FAILED" : "PASSED";
}

export function signoffFacts(summary: RunSummary, summarySha256: string): SignoffFacts {
  const passed = summary.scenarios.filter((s) => s.outcome === "passed").length;
  const failed = summary.scenarios.length - passed;
  const skipped = summary.skipped ?? [];
  const counts = `scenarios: ${passed} passed, ${failed} failed, ${skipped.length} skipped`;
  const broke = summary.error ?? undefined;
  return {
    runId: summary.runId,
    verdict: verdictOf(summary, passed, failed),
    verdictLine:
      broke !== undefined
        ? `${broke.code === "ABORTED" ? "the run was stopped" : "the harness broke"} during ${broke.phase} (${broke.code}): ${broke.message}${broke.hint !== undefined ? ` — ${broke.hint}` : ""}; ${counts}`
        : counts,
    summarySha256,
    versions: [...versionFacts(summary, summary.environment), ...shardFacts(summary)],
    knobs: summary.environment === undefined ? [] : knobFacts(summary.environment),
    host: hostFactsOf(summary.environment),
    scenarios: summary.scenarios.map(scenarioSignoff),
    skipped,
  };
}

export interface WrittenSignoff {
  html: string;
  markdown: string;
  /** $GITHUB_STEP_SUMMARY, when the Markdown was appended to it. */
  stepSummary?: string;
  /** Why appending to $GITHUB_STEP_SUMMARY failed (the sign-off files are written regardless). */
  stepSummaryError?: string;
}

/**
 * Writes signoff.html and signoff.md next to summary.json (which must be written already: its
 * sha256 is on both), and appends the Markdown to $GITHUB_STEP_SUMMARY when that is set.
 */
export function writeSignoff(
  dir: string,
  summary: RunSummary,
  charts: ReadonlyMap<string, string>,
  env: NodeJS.ProcessEnv = process.env,
): WrittenSignoff {
  const facts = signoffFacts(summary, sha256Hex(readFileSync(join(dir, "summary.json"))));
  const html = join(dir, "signoff.html");
  const markdown = join(dir, "signoff.md");
  writeFileSync(html, signoffHtml(facts, charts));
  const md = signoffMarkdown(facts);
  writeFileSync(markdown, md);
  const stepSummary = env["GITHUB_STEP_SUMMARY"];
  if (stepSummary === undefined || stepSummary === "") return { html, markdown };
  try {
    appendFileSync(stepSummary, `${md}\n`);
  } catch (error) {
    return { html, markdown, stepSummaryError: `${stepSummary}: ${errorMessage(error)}` };
  }
  return { html, markdown, stepSummary };
}
