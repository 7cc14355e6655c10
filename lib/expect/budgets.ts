// Budgets: absolute service-level objectives per workload ("recovered within 45 s", "at most 1
// replica unavailable", "never evicted", "never Ready on two nodes at once"), checked after a run
// beside the model's windows. Unlike a window a budget has no slack: it is the user's own number.
// The time budgets read the workload's milestones; the others replay its pods' transitions
// (budget-pods.ts).
import { RekindleError } from "../errors.js";
import type { Milestone } from "../observe/milestones.js";
import type { Transition } from "../observe/types.js";
import type { ExpectedMilestone } from "./windows.js";
import type { BudgetSpec } from "./budget-spec.js";
import { firstEviction, maxUnavailable, readyOnTwoNodes, type BudgetWorkload } from "./budget-pods.js";

export type { BudgetWorkload };

/** One workload's budgets, as a scenario file states them (budget-spec.ts). */
export type WorkloadBudgets = BudgetSpec;

export const BUDGET_KINDS = [
  "recoveredWithin",
  "servingWithin",
  "maxUnavailable",
  "neverEvicted",
  "neverReadyOnTwoNodes",
  "neverTwoWriters",
] as const;
export type BudgetKind = (typeof BUDGET_KINDS)[number];

/** Each kind in words, for a table with the limit in a column of its own. */
export const BUDGET_LABELS: Readonly<Record<BudgetKind, string>> = {
  recoveredWithin: "recovered within",
  servingWithin: "serving within",
  maxUnavailable: "replicas unavailable at most",
  neverEvicted: "evicted",
  neverReadyOnTwoNodes: "Ready on two nodes at once",
  neverTwoWriters: "two writers on its volume at once",
};

/** One budget of one workload against what one run measured. */
export interface BudgetResult {
  workload: string;
  budget: BudgetKind;
  /** The budget as written: "45 s", "1", "never". */
  limit: string;
  /** What the run measured: "38.2 s", "not recovered", "2 at 12.3 s", "0", "evicted at 8.1 s", "never". */
  measured: string;
  passed: boolean;
  /**
   * The measured number, to compare runs: ms since the fault (a time budget: when it came; a
   * "never" budget: when it happened) or a replica count (maxUnavailable); null when the awaited
   * milestone never came, or the forbidden thing never happened.
   */
  value: number | null;
  /**
   * A time budget whose milestone the model expected never to come within the run (a node-local
   * volume whose node does not return): why. Such a budget cannot be met in this scenario; it is
   * checked and reported missed like any other, with this reason beside it.
   */
  expectedNever?: string;
}

export interface BudgetInput {
  /** The run's judged milestones, ms since the fault. */
  milestones: readonly Milestone[];
  /** The recorded transitions (epoch ms), up to the end of the scenario's own steps. */
  transitions: readonly Transition[];
  /** Date.now() at the fault. */
  faultAtMs: number;
  /** The nodes the fault hit: a pod deleted there after the fault was evicted by it. */
  faultNodes: readonly string[];
  /** Every workload a budget names: how its pods are found and how many it wants. */
  workloads: readonly BudgetWorkload[];
  /** The expected timeline the run was judged by: a time budget's "never" window gives its reason. */
  expected?: readonly ExpectedMilestone[];
}

/** "45 s", "1.5 s", "0.5 s": a budget's limit as a person writes it. */
export function limitSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1)} s`;
}

/** "38.2 s": a measured time, to a tenth of a second. */
export function measuredSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** When what a time budget waits for came, or why it counts as not come ("not serving", "not answering"). */
type Came = { atMs: number } | { missing: string };

/**
 * Serving: its Service's endpoints back (`<id>:serving`) and, when its probe failed, the probe
 * answering again (`<id>:answering`): the later of the two.
 */
function servingCame(workload: string, milestones: readonly Milestone[]): Came {
  const at = (suffix: string) => milestones.find((m) => m.name === `${workload}:${suffix}`)?.atMs;
  const serving = at("serving");
  if (serving === undefined) return { missing: "not serving" };
  if (at("probe-failing") === undefined) return { atMs: serving };
  const answering = at("answering");
  return answering === undefined ? { missing: "not answering" } : { atMs: Math.max(serving, answering) };
}

/** What a time budget waits for: `<id>:recovered`, or serving (see servingCame). */
function cameFor(
  budget: "recoveredWithin" | "servingWithin",
  workload: string,
  milestones: readonly Milestone[],
): Came {
  if (budget === "servingWithin") return servingCame(workload, milestones);
  const recovered = milestones.find((m) => m.name === `${workload}:recovered`);
  return recovered === undefined ? { missing: "not recovered" } : { atMs: recovered.atMs };
}

/** recoveredWithin / servingWithin: what the budget waits for (cameFor) by the limit. */
function timeBudget(
  budget: "recoveredWithin" | "servingWithin",
  workload: string,
  limitMs: number,
  input: BudgetInput,
): BudgetResult {
  const came = cameFor(budget, workload, input.milestones);
  const name = `${workload}:${budget === "recoveredWithin" ? "recovered" : "serving"}`;
  const never = input.expected?.find((e) => e.name === name && e.maxMs === null);
  const written = {
    workload,
    budget,
    limit: limitSeconds(limitMs),
    ...(never !== undefined ? { expectedNever: never.why } : {}),
  };
  if ("missing" in came) return { ...written, measured: came.missing, passed: false, value: null };
  return { ...written, measured: measuredSeconds(came.atMs), passed: came.atMs <= limitMs, value: came.atMs };
}

/** A "never" budget: passed when the forbidden thing did not happen. */
function neverBudget(
  budget: "neverEvicted" | "neverReadyOnTwoNodes" | "neverTwoWriters",
  workload: string,
  happened: { atMs: number; what: string } | undefined,
): BudgetResult {
  return {
    workload,
    budget,
    limit: "never",
    measured: happened === undefined ? "never" : `${happened.what} at ${measuredSeconds(happened.atMs)}`,
    passed: happened === undefined,
    value: happened?.atMs ?? null,
  };
}

function workloadOf(input: BudgetInput, id: string): BudgetWorkload {
  const workload = input.workloads.find((w) => w.id === id);
  if (workload === undefined) {
    throw new RekindleError(
      "SCENARIO_DEFINITION",
      `a budget names workload "${id}", which the scenario has not`,
      {
        hint: `budgets may name: ${input.workloads.map((w) => w.id).join(", ") || "no workload"}`,
      },
    );
  }
  return workload;
}

function unavailableBudget(input: BudgetInput, id: string, limit: number): BudgetResult {
  const worst = maxUnavailable(input.transitions, input.faultAtMs, workloadOf(input, id));
  const measured =
    worst === undefined
      ? "no pod of it seen"
      : worst.count === 0
        ? "0"
        : `${worst.count} at ${measuredSeconds(worst.atMs)}`;
  return {
    workload: id,
    budget: "maxUnavailable",
    limit: String(limit),
    measured,
    passed: worst !== undefined && worst.count <= limit,
    value: worst?.count ?? null,
  };
}

/** A pod evicted: by the kubelet (`<id>:pod-evicted`, or a pod ended Evicted) or off a faulted node. */
function evictedBudget(input: BudgetInput, id: string): BudgetResult {
  const milestone = input.milestones.find((m) => m.name === `${id}:pod-evicted`);
  const fromPods = firstEviction(input.transitions, input.faultAtMs, input.faultNodes, workloadOf(input, id));
  const happened =
    milestone !== undefined && (fromPods === undefined || milestone.atMs < fromPods.atMs)
      ? { atMs: milestone.atMs, what: "evicted" }
      : fromPods;
  return neverBudget("neverEvicted", id, happened);
}

/**
 * Two pods of one identity Ready at once on different nodes, from its pods' transitions; the
 * `<id>:duplicate-ready` milestone stands in only when no pod of it was seen.
 */
function twoNodesBudget(input: BudgetInput, id: string): BudgetResult {
  const computed = readyOnTwoNodes(input.transitions, input.faultAtMs, workloadOf(input, id));
  const milestone = input.milestones.find((m) => m.name === `${id}:duplicate-ready`);
  const happened =
    computed.seen || milestone === undefined
      ? computed.happened
      : { atMs: milestone.atMs, what: `Ready on two nodes${milestone.node ? ` (${milestone.node})` : ""}` };
  return neverBudget("neverReadyOnTwoNodes", id, happened);
}

/**
 * Two writers on its volume at once: the `<id>:two-writers` milestone, which the writer log's check
 * marks at the start of the first overlap (its node: the writer that made it two).
 */
function twoWritersBudget(input: BudgetInput, id: string): BudgetResult {
  workloadOf(input, id);
  const milestone = input.milestones.find((m) => m.name === `${id}:two-writers`);
  const happened =
    milestone === undefined
      ? undefined
      : { atMs: milestone.atMs, what: `two writers${milestone.node ? ` (${milestone.node})` : ""}` };
  return neverBudget("neverTwoWriters", id, happened);
}

/**
 * The time budgets whose milestone the expected timeline says never comes (`rekindle list -f`
 * names them before a run): "postgres recovered within 45 s: the model expects postgres:recovered
 * never". Such a budget is still checked, and missed, when the file runs.
 */
export function budgetsExpectedNever(
  budgets: readonly WorkloadBudgets[],
  expected: readonly ExpectedMilestone[],
): string[] {
  const never = (name: string) => expected.some((e) => e.name === name && e.maxMs === null);
  return budgets.flatMap((b) => [
    ...(b.recoveredWithinMs !== undefined && never(`${b.workload}:recovered`)
      ? [
          `${b.workload} recovered within ${limitSeconds(b.recoveredWithinMs)}: the model expects ${b.workload}:recovered never`,
        ]
      : []),
    ...(b.servingWithinMs !== undefined && never(`${b.workload}:serving`)
      ? [
          `${b.workload} serving within ${limitSeconds(b.servingWithinMs)}: the model expects ${b.workload}:serving never`,
        ]
      : []),
  ]);
}

/** Every budget of `budgets` against one run, in the order written (per workload, in BUDGET_KINDS order). */
export function checkBudgets(budgets: readonly WorkloadBudgets[], input: BudgetInput): BudgetResult[] {
  return budgets.flatMap((b): BudgetResult[] => [
    ...(b.recoveredWithinMs !== undefined
      ? [timeBudget("recoveredWithin", b.workload, b.recoveredWithinMs, input)]
      : []),
    ...(b.servingWithinMs !== undefined
      ? [timeBudget("servingWithin", b.workload, b.servingWithinMs, input)]
      : []),
    ...(b.maxUnavailable !== undefined ? [unavailableBudget(input, b.workload, b.maxUnavailable)] : []),
    ...(b.neverEvicted === true ? [evictedBudget(input, b.workload)] : []),
    ...(b.neverReadyOnTwoNodes === true ? [twoNodesBudget(input, b.workload)] : []),
    ...(b.neverTwoWriters === true ? [twoWritersBudget(input, b.workload)] : []),
  ]);
}

/** "db recovered within 45 s", "db at most 1 unavailable", "db never evicted": the budget in words. */
export function budgetWords(result: Pick<BudgetResult, "workload" | "budget" | "limit">): string {
  const { workload, limit } = result;
  switch (result.budget) {
    case "recoveredWithin":
      return `${workload} recovered within ${limit}`;
    case "servingWithin":
      return `${workload} serving within ${limit}`;
    case "maxUnavailable":
      return `${workload} at most ${limit} unavailable`;
    case "neverEvicted":
      return `${workload} never evicted`;
    case "neverReadyOnTwoNodes":
      return `${workload} never Ready on two nodes at once`;
    case "neverTwoWriters":
      return `${workload} never two writers on its volume at once`;
  }
}

/**
 * "budget missed: db recovered within 45 s — measured 52.3 s": a missed budget's verdict line,
 * with the model's reason when it expected the milestone never to come.
 */
export function missedBudgetLine(result: BudgetResult): string {
  const never = result.expectedNever !== undefined ? `, as the model expects: ${result.expectedNever}` : "";
  return `budget missed: ${budgetWords(result)} — measured ${result.measured}${never}`;
}

/** The verdict lines of the budgets a run missed, in order; empty when it met them all. */
export function missedBudgetLines(results: readonly BudgetResult[]): string[] {
  return results.filter((r) => !r.passed).map(missedBudgetLine);
}
