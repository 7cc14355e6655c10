// How every scenario ends: its milestones checked against the expected windows and its budgets
// (if it has any), a verdict with a line per missed budget and the expected-vs-actual table on
// failure, the timeline chart, and the Allure attachments.
import * as allure from "allure-js-commons";
import { errorMessage } from "../errors.js";
import { checkTimeline, formatChecks, timelineMismatch, type WindowCheck } from "../expect/assert.js";
import { missedBudgetLines, type BudgetResult } from "../expect/budgets.js";
import { nominalWindows, type ExpectedMilestone } from "../expect/model.js";
import { recoveryMs, type Milestone } from "../observe/milestones.js";
import { timelineSvg } from "../report/chart.js";
import type { ScenarioRun, SummaryExpected } from "../report/summary-types.js";

export interface ScenarioVerdictInput {
  title: string;
  subtitle: string;
  expected: readonly ExpectedMilestone[];
  milestones: Milestone[];
  /** What a step threw, if one did. */
  failure: unknown;
  /** Workloads whose `<id>:recovered` make up the recovery time; none: no recovery time. */
  recoveryOf: readonly string[];
  /** The scenario's budgets checked against this run (checkBudgets); absent when it has none. */
  budgets?: readonly BudgetResult[];
  /** Nodes per zone when the fault started, for the chart's aggregated rows. */
  zoneSizes?: Readonly<Record<string, number>>;
}

export interface ScenarioVerdict extends ScenarioRun {
  checks: WindowCheck[];
  /** The timeline chart (SVG text). */
  chart: string;
}

export async function concludeScenario(input: ScenarioVerdictInput): Promise<ScenarioVerdict> {
  const milestones = [...input.milestones].sort((a, b) => a.atMs - b.atMs);
  const checks = checkTimeline(input.expected, milestones);
  const mismatch = timelineMismatch(input.title, checks);
  // null when a workload never served again (the baseline's StatefulSets) or none is tracked.
  const recovered = input.recoveryOf.length > 0 ? recoveryMs(milestones, input.recoveryOf) : undefined;
  const errorText = verdictError(input.failure, input.budgets ?? [], mismatch?.message);
  const windows = summaryExpected(input.expected, checks);
  const chart = timelineSvg({
    title: input.title,
    subtitle: input.subtitle,
    milestones,
    checks,
    windows,
    ...(input.zoneSizes !== undefined ? { zoneSizes: input.zoneSizes } : {}),
  });
  await allure.attachment("timeline.svg", chart, "image/svg+xml");
  await allure.attachment("expected-vs-actual.txt", formatChecks(checks), "text/plain");
  await allure.attachment("milestones.json", JSON.stringify(milestones, null, 2), "application/json");
  if (input.budgets !== undefined)
    await allure.attachment("budgets.json", JSON.stringify(input.budgets, null, 2), "application/json");
  const explained = checks.flatMap((c) =>
    c.explained !== undefined
      ? [`${c.name} at ${((c.actualMs ?? 0) / 1000).toFixed(1)}s: ${c.explained}`]
      : [],
  );
  return {
    outcome: errorText === undefined ? "passed" : "failed",
    recoveryMs: recovered ?? null,
    milestones,
    ...(errorText !== undefined ? { error: errorText } : {}),
    ...(explained.length > 0 ? { explained } : {}),
    ...(input.budgets !== undefined ? { budgets: [...input.budgets] } : {}),
    checks,
    chart,
  };
}

/**
 * Why the run failed, or undefined: a step's own failure alone (the timeline after it says
 * little); else a line per missed budget, then the windows' mismatch table, both when both failed.
 */
export function verdictError(
  failure: unknown,
  budgets: readonly BudgetResult[],
  mismatch: string | undefined,
): string | undefined {
  if (failure !== undefined) return errorMessage(failure);
  const missed = missedBudgetLines(budgets);
  const parts = [
    ...(missed.length > 0 ? [missed.join("\n")] : []),
    ...(mismatch !== undefined ? [mismatch] : []),
  ];
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

/** Resolved expected windows for summary.json: against actual anchors where known, else nominal. */
export function summaryExpected(
  expected: readonly ExpectedMilestone[],
  checks: readonly WindowCheck[],
): SummaryExpected[] {
  const nominal = new Map(nominalWindows(expected).map((w) => [w.name, w]));
  return expected.map((e) => {
    const check = checks.find((c) => c.name === e.name);
    const minMs = check?.minMs ?? nominal.get(e.name)?.minMs ?? e.minMs;
    const maxMs = e.maxMs === null ? null : (check?.maxMs ?? nominal.get(e.name)?.maxMs ?? e.maxMs);
    return { name: e.name, minMs, maxMs };
  });
}
