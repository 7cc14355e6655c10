// Every family at the default profile (upstream's numbers: 40 s lease, 50 s grace, 300 s
// tolerations, the 6-minute forced detach) on the sim provider, one `rekindle run` per family as a
// user types it. The gate runs the fast profile only; this is the slow half of `npm run test:full`.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunSummary } from "../../lib/report/summary.js";
import { SCENARIOS, SUITE_FAMILIES } from "../../suites/index.js";
import { runOnSim } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";

/** The longest family (node-loss: three 6-minute forced detaches and two 5-minute tolerations, one after another). */
const FAMILY_RUN_MS = 90 * 60_000;

describe("every family at the default profile (sim provider)", function () {
  const base = testRunDir("default-profile");

  for (const family of SUITE_FAMILIES) {
    it(`${family}: every scenario passes or is skipped with the provider's reason`, async function () {
      const reportDir = join(base, family);
      const run = await runOnSim(this, "default", reportDir, ["--no-html", "--suite", family], FAMILY_RUN_MS);
      const summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
      expect(run.exitCode, `${run.stdout.slice(-6000)}\n${run.stderr.slice(-4000)}`).to.equal(0);
      expect(summary.profile).to.equal("default");
      const skipped = new Map((summary.skipped ?? []).map((s) => [s.id, s.reason]));
      for (const [id, reason] of skipped) expect(reason, `${id}'s skip reason`).to.not.equal("");
      const ran = summary.scenarios.map((s) => s.id);
      expect([...ran, ...skipped.keys()].sort()).to.deep.equal(SCENARIOS[family].map((s) => s.id).sort());
      for (const s of summary.scenarios) expect(s.outcome, `${s.id}: ${s.error ?? ""}`).to.equal("passed");
    });
  }
});
