// The operator's reflexes on a lost node, end to end through `rekindle run` on the sim provider
// (fast profile): force delete, drain, and force delete under --disable-force-detach-on-timeout.
// The sim's nodes report volumesInUse, so the real attach-detach controller holds the volume for
// its 6-minute forced detach (or, disabled, until the out-of-service taint), as upstream.
import { expect } from "chai";
import { join } from "node:path";
import { FORCED_DETACH_WAIT_MS } from "../../lib/expect/model.js";
import { readSummary } from "../../lib/report/compare.js";
import type { RunSummary, ScenarioSummary } from "../../lib/report/summary.js";
import { runOnSimFast } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";
const SCENARIOS = [
  "node-loss/force-delete-by-hand",
  "node-loss/drain-by-hand",
  "node-loss/force-delete-detach-disabled",
];

function at(s: ScenarioSummary | undefined, milestone: string): number {
  const m = s?.milestones.find((x) => x.name === milestone);
  expect(m, `${s?.id ?? "?"}: milestone ${milestone}`).to.not.equal(undefined);
  return m?.atMs ?? Number.NaN;
}

function names(s: ScenarioSummary | undefined): string[] {
  return s?.milestones.map((m) => m.name) ?? [];
}

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
      const s = scenario(id);
      const gone = at(s, "statefulset:pod-gone");
      expect(gone - at(s, "released-by-hand")).to.be.within(0, 2_000);
      expect(at(s, "multi-attach")).to.be.within(gone, gone + 3_000);
      // The upstream constant, measured: never before it, and not long after.
      const detach = at(s, "va-detach-started") - gone;
      expect(detach).to.be.within(FORCED_DETACH_WAIT_MS, FORCED_DETACH_WAIT_MS + 5_000);
      expect(at(s, "forced-detach:timeout") - gone).to.be.within(
        FORCED_DETACH_WAIT_MS,
        FORCED_DETACH_WAIT_MS + 5_000,
      );
      expect(at(s, "statefulset:recovered")).to.be.above(at(s, "va-attached-elsewhere"));
      // The StatefulSet without a volume is back within seconds; the dead kubelet's report never changed.
      expect(at(s, "statefulset-plain:recovered") - gone).to.be.below(5_000);
      expect(names(s)).to.not.include("volumes-in-use-changed");
    });
  }

  it("drain-by-hand: the plain drain times out on the Terminating StatefulSet pods; the second, with no grace, frees them", function () {
    const s = scenario("node-loss/drain-by-hand");
    const started = at(s, "drain-started");
    expect(at(s, "statefulset:pod-deletion-requested") - started).to.be.below(2_000);
    expect(at(s, "drain-timed-out")).to.be.below(at(s, "released-by-hand") + 1);
    expect(at(s, "statefulset:pod-gone")).to.be.above(at(s, "drain-timed-out"));
    // The Deployment's pods went with the first drain, long before the second.
    expect(at(s, "deployment:recovered")).to.be.below(at(s, "drain-timed-out"));
  });

  it("force-delete-detach-disabled: no timeout detach; the volume moves only after the out-of-service taint", function () {
    const s = scenario("node-loss/force-delete-detach-disabled");
    expect(names(s)).to.not.include("forced-detach:timeout");
    const taint = at(s, "taint-added:node.kubernetes.io/out-of-service");
    expect(taint - at(s, "statefulset:pod-gone")).to.be.above(FORCED_DETACH_WAIT_MS);
    expect(at(s, "va-detach-started")).to.be.at.least(taint);
    expect(at(s, "forced-detach:out-of-service")).to.be.at.least(taint - 1_000);
    expect(at(s, "statefulset:recovered")).to.be.above(taint);
  });
});
