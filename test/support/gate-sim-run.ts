// The gate's families on the sim, side by side: one `rekindle run --provider sim --profile fast`
// of every family the gate checks end to end beyond node loss (run-reports.test.ts has that one),
// as a user types it, so they share the machine as the main command does (zone-disruption on a
// cluster of its size beside the default-sized ones). It runs once per mocha process; each test
// file (suites, safety, zone-disruption) awaits it and judges its own families' scenarios.
import { expect } from "chai";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { RunSummary, ScenarioSummary } from "../../lib/report/summary.js";
import { SUITE_FAMILIES } from "../../suites/index.js";
import { allowFor, readRunSummary, runOnSimFast } from "./rekindle-run.js";
import { testRunDir } from "./run-dir.js";

/** Every family but node-loss, whose run run-reports.test.ts checks with its reports. */
export const GATE_SIM_FAMILIES = SUITE_FAMILIES.filter((family) => family !== "node-loss");

/** The whole run's limit: the slowest measured cluster's share took under 8 minutes. */
const RUN_TIMEOUT_MS = 30 * 60_000;

export interface GateSimRun {
  reportDir: string;
  exitCode: number | undefined;
  stdout: string;
  /** The tail of both streams, for an assertion's message. */
  output: string;
  summary: RunSummary;
}

let shared: Promise<GateSimRun> | undefined;

/** The run, started by the first caller; `context` (a hook's `this`) gets the time it may take. */
export function gateSimRun(context: Mocha.Context): Promise<GateSimRun> {
  allowFor(context, RUN_TIMEOUT_MS);
  shared ??= (async () => {
    const reportDir = join(testRunDir("gate-families"), "report");
    const families = GATE_SIM_FAMILIES.flatMap((f) => ["--suite", f]);
    const run = await runOnSimFast(context, reportDir, ["--no-html", ...families], RUN_TIMEOUT_MS);
    const output = `${run.stdout.slice(-6000)}\n${run.stderr.slice(-4000)}`;
    expect(existsSync(join(reportDir, "summary.json")), `no summary.json:\n${output}`).to.equal(true);
    return {
      reportDir,
      exitCode: run.exitCode,
      stdout: run.stdout,
      output,
      summary: readRunSummary(reportDir),
    };
  })();
  return shared;
}

/** The run's scenarios of `family`, each of which must have passed. */
export function passedScenariosOf(run: GateSimRun, family: string): ScenarioSummary[] {
  const own = run.summary.scenarios.filter((s) => s.id.startsWith(`${family}/`));
  for (const s of own) expect(s.outcome, `${s.id}: ${s.error ?? ""}`).to.equal("passed");
  const skipped = (run.summary.skipped ?? []).filter((s) => s.id.startsWith(`${family}/`));
  expect(skipped, `${family}: skipped`).to.deep.equal([]);
  return own;
}
