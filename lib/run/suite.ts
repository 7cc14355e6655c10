// Defines a mocha suite for a family of harness scenarios: one test per scenario, repeated as the
// run asks, each run recorded for the reports. A scenario the provider cannot run is skipped with
// the provider's stated reason (printed, and listed under "skipped" in summary.json and JUnit).
import { randomBytes } from "node:crypto";
import type { Context } from "mocha";
import type { NodeCapability } from "../cluster/provider.js";
import { SCENARIOS, type SuiteFamily } from "../scenario/catalogue.js";
import { runScenario } from "../scenario/harness.js";
import { summaryExpected } from "../scenario/verdict.js";
import { recordScenarioRun, recordSkip, runContext } from "./context.js";

/** Skips the current test, recording the provider's reason, when the provider lacks a capability. */
export function skipUnlessSupported(test: Context, id: string, requires: readonly NodeCapability[]): void {
  const context = runContext();
  for (const capability of requires) {
    const reason = context.cluster.unsupported[capability];
    if (reason !== undefined) {
      const text = `${context.cluster.provider} provider cannot inject "${capability}" faults: ${reason}`;
      recordSkip(id, text);
      context.progress.info(`${id}: skipped — ${text}`);
      test.skip();
    }
  }
}

/** A namespace name unique to this run of the scenario. */
export function scenarioNamespace(id: string, run: number): string {
  const slug = id.replace(/[^a-z0-9]+/g, "-").slice(0, 40);
  return `${slug}-${run}-${randomBytes(2).toString("hex")}`;
}

export function defineHarnessSuite(family: SuiteFamily): void {
  describe(family, function () {
    this.timeout(0);
    for (const definition of SCENARIOS[family]) {
      it(`${definition.id} — ${definition.title}`, async function () {
        skipUnlessSupported(this, definition.id, definition.requires);
        const context = runContext();
        const failures: string[] = [];
        for (let i = 1; i <= context.repeat; i++) {
          const result = await runScenario(definition, {
            cluster: context.cluster,
            namespace: scenarioNamespace(definition.id, i),
            progress: context.progress,
            signal: context.signal,
          });
          recordScenarioRun(
            definition.id,
            result,
            summaryExpected(result.expected, result.checks),
            result.chart,
          );
          if (result.outcome === "failed") failures.push(`run ${i}: ${result.error ?? "failed"}`);
        }
        if (failures.length > 0) throw new Error(failures.join("\n\n"));
      });
    }
  });
}
