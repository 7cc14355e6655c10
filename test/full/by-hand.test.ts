// The operator's reflexes on a lost node, end to end through `rekindle run` on the sim provider
// (fast profile): force delete, drain, and force delete under --disable-force-detach-on-timeout.
// The sim's nodes report volumesInUse, so the real attach-detach controller holds the volume for
// its 6-minute forced detach (or, disabled, until the out-of-service taint), as upstream.
import { expect } from "chai";
import { join } from "node:path";
import { readSummary } from "../../lib/report/compare.js";
import type { RunSummary } from "../../lib/report/summary.js";
import {
  BY_HAND_SCENARIOS as SCENARIOS,
  expectDetachOnlyAfterTaint,
  expectDrainTwice,
  expectSixMinuteDetach,
} from "../support/by-hand-checks.js";
import { runOnSimFast } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";

describe("node loss released by hand (sim, fast profile): the 6-minute forced detach", function () {
  const base = testRunDir("by-hand");
  let summaries: RunSummary[] = [];
  const scenario = (id: string) => summaries.flatMap((s) => s.scenarios).find((s) => s.id === id);

  before(async function () {
    this.timeout(20 * 60_000);
    // Three runs at once, each on its own sim cluster: each waits out the same 6-minute forced
    // detach, mostly idle, so together they take one wait instead of three (CI time).
    const runs = await Promise.all(
      SCENARIOS.map(async (id) => {
        const reportDir = join(base, id.slice(id.indexOf("/") + 1));
        const run = await runOnSimFast(
          this,
          reportDir,
          ["--suite", "node-loss", "--scenario", `${id} —`, "--no-html"],
          18 * 60_000,
        );
        return { id, run, reportDir };
      }),
    );
    for (const { id, run } of runs) {
      expect(run.exitCode, `${id}: ${run.stdout.slice(-6000)}\n${run.stderr.slice(-3000)}`).to.equal(0);
    }
    summaries = runs.map((r) => readSummary(join(r.reportDir, "summary.json")));
  });

  it("runs the three scenarios, all passing", function () {
    expect(summaries.flatMap((s) => s.scenarios).map((s) => [s.id, s.outcome])).to.deep.equal(
      SCENARIOS.map((id) => [id, "passed"]),
    );
  });

  for (const id of ["node-loss/force-delete-by-hand", "node-loss/drain-by-hand"]) {
    it(`${id}: the pod goes at once, the replacement is blocked by Multi-Attach, the volume moves only after 6 minutes`, function () {
      expectSixMinuteDetach(scenario(id));
    });
  }

  it("drain-by-hand: the plain drain times out on the Terminating StatefulSet pods; the second, with no grace, frees them", function () {
    expectDrainTwice(scenario("node-loss/drain-by-hand"));
  });

  it("force-delete-detach-disabled: no timeout detach; the volume moves only after the out-of-service taint", function () {
    expectDetachOnlyAfterTaint(scenario("node-loss/force-delete-detach-disabled"));
  });
});
