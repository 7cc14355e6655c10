// `rekindle run`'s choice between one cluster and several, as its plan's layout says (run-plan.ts:
// `--parallel N|auto` as given, 1 a serial run; by default, on the sim, `auto`, which
// parallel-count.ts sizes from the machine and the selection, one cluster running serially).
import { runParallel } from "./parallel-run.js";
import type { RunPlan } from "./run-plan.js";
import { runConformance, type RunResult, type RunScope } from "./runner.js";

export function runPlanned(plan: RunPlan, scope: RunScope = {}): Promise<RunResult> {
  return plan.layout.parallel === 1 ? runConformance(plan, scope) : runParallel(plan, scope);
}
