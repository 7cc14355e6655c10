// What a `rekindle run` hands to the mocha suites it loads: the cluster under test, the repeat
// count, and a place to record each scenario run for the reports.
import { RekindleError } from "../errors.js";
import type { ClusterUnderTest } from "../cluster/provider.js";
import type { ScenarioRun, SummaryExpected } from "../report/summary.js";
import type { Progress } from "../util/progress.js";

export interface RecordedScenario {
  id: string;
  runs: ScenarioRun[];
  expected: SummaryExpected[];
  /** SVG of the first run's timeline (later runs are in Allure). */
  chart: string;
}

export interface RunContext {
  cluster: ClusterUnderTest;
  repeat: number;
  progress: Progress;
  signal: AbortSignal;
  scenarios: Map<string, RecordedScenario>;
  /** Scenarios the provider cannot run, with the reason. */
  skipped: Map<string, string>;
}

// Kept on globalThis: mocha may load a suite through another module system than the runner's (tsx
// serves .ts files to require() and import() as separate module instances).
const KEY = Symbol.for("rekindle.runContext");
const store = globalThis as typeof globalThis & { [KEY]?: RunContext };

export function setRunContext(context: RunContext | undefined): void {
  if (context === undefined) Reflect.deleteProperty(store, KEY);
  else store[KEY] = context;
}

/** The active run; suites loaded outside `rekindle run` fail with a clear message. */
export function runContext(): RunContext {
  const current = store[KEY];
  if (!current) {
    throw new RekindleError("STATE", "rekindle suites run inside `rekindle run` (no run context is set)", {
      hint: "run them with `npx rekindle run --suite <family>`",
    });
  }
  return current;
}

export function recordScenarioRun(
  id: string,
  run: ScenarioRun,
  expected: SummaryExpected[],
  chart: string,
): void {
  const context = runContext();
  const entry = context.scenarios.get(id) ?? { id, runs: [], expected, chart };
  entry.runs.push(run);
  context.scenarios.set(id, entry);
}

export function recordSkip(id: string, reason: string): void {
  runContext().skipped.set(id, reason);
}
