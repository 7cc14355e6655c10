// A scenario's budgets over its repeated runs, for summary.json and the pages made from it: a
// budget passes only if it passed in every run, and shows what its worst run measured.
import { missedBudgetLine, type BudgetKind, type BudgetResult } from "../expect/budgets.js";
import type { ScenarioRun, ScenarioSummary, SummaryBudget } from "./summary-types.js";

/** Budgets whose larger measure is the worse one (a later recovery, more replicas down). */
const LARGER_IS_WORSE: ReadonlySet<BudgetKind> = new Set([
  "recoveredWithin",
  "servingWithin",
  "maxUnavailable",
]);

/** The worse of two runs' results of one budget; the earlier run on a tie. */
export function worseBudgetResult(a: BudgetResult, b: BudgetResult): BudgetResult {
  if (a.passed !== b.passed) return a.passed ? b : a;
  // A "never" budget: having happened is worse than not; of two that happened, the first run.
  if (!LARGER_IS_WORSE.has(a.budget)) return a.value === null && b.value !== null ? b : a;
  // null: the milestone never came (or no pod was seen), worse than any number.
  if (a.value === null) return a;
  if (b.value === null) return b;
  return b.value > a.value ? b : a;
}

/** Each budget the runs checked, in the order first checked, over every run. */
export function summarizeBudgets(runs: readonly ScenarioRun[]): SummaryBudget[] {
  const byBudget = new Map<string, BudgetResult[]>();
  for (const run of runs) {
    for (const result of run.budgets ?? []) {
      const key = `${result.workload}\u0000${result.budget}`;
      byBudget.set(key, [...(byBudget.get(key) ?? []), result]);
    }
  }
  return [...byBudget.values()].map((results) => {
    const worst = results.reduce(worseBudgetResult);
    const missedRuns = runs.length - results.filter((r) => r.passed).length;
    return { ...worst, passed: missedRuns === 0, missedRuns };
  });
}

/** A budget's verdict line in the summary, with how many runs missed it when it ran more than once. */
export function summaryBudgetLine(budget: SummaryBudget, runs: number): string {
  return `${missedBudgetLine(budget)}${runs > 1 ? ` (worst run; missed in ${budget.missedRuns} of ${runs})` : ""}`;
}

/** The budgets the scenario missed over its runs. */
export function missedBudgets(scenario: Pick<ScenarioSummary, "budgets">): SummaryBudget[] {
  return (scenario.budgets ?? []).filter((b) => !b.passed);
}

/** The verdict line of each budget the scenario missed ("budget missed: db recovered within 45 s — measured 52.3 s"). */
export function missedSummaryBudgetLines(scenario: Pick<ScenarioSummary, "budgets" | "runs">): string[] {
  return missedBudgets(scenario).map((b) => summaryBudgetLine(b, scenario.runs.length));
}
