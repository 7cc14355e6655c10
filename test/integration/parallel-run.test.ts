// `rekindle run --parallel` end to end on the sim provider (fast profile), with a selection that
// mixes the zone-disruption family (12 workers at this profile) with a scenario written for the
// default 3 workers: one cluster is sized for the zone-disruption scenarios and runs all four, the
// other keeps the default layout, and the joined reports hold them all. The zone-disruption family
// runs in the gate here.
import { expect } from "chai";
import { join } from "node:path";
import type { RunSummary } from "../../lib/report/summary.js";
import { scenarios as zoneDisruptionScenarios } from "../../suites/zone-disruption/index.js";
import { readRunSummary, runOnSimFast } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";

describe("rekindle run --parallel 2 with the zone-disruption family and a default-sized scenario (sim, fast profile)", function () {
  const reportDir = join(testRunDir("parallel-mixed"), "report");
  let summary: RunSummary;
  let stdout = "";

  before(async function () {
    const run = await runOnSimFast(
      this,
      reportDir,
      ["--no-html", "--parallel", "2", "--suite", "zone-disruption", "--suite", "preflight"],
      1_200_000,
    );
    stdout = run.stdout;
    summary = readRunSummary(reportDir);
    expect(run.exitCode, `${run.stdout.slice(-6000)}\n${run.stderr.slice(-4000)}`).to.equal(0);
  });

  it("runs every zone-disruption scenario and the preflight one, all passing, none skipped", function () {
    const ids = summary.scenarios.map((s) => s.id);
    expect(ids).to.have.members([...zoneDisruptionScenarios.map((s) => s.id), "preflight/node-heartbeats"]);
    for (const s of summary.scenarios) expect(s.outcome, `${s.id}: ${s.error ?? ""}`).to.equal("passed");
    expect(summary.skipped ?? []).to.deep.equal([]);
    expect(stdout).to.match(/^scenarios: 5 passed, 0 failed$/m);
  });

  it("ran the zone-disruption scenarios on a cluster of 12 workers and the other on one of 3", function () {
    const slots = summary.parallel?.slots ?? [];
    expect(slots).to.have.length(2);
    const zoneIds = new Set(zoneDisruptionScenarios.map((s) => s.id));
    for (const slot of slots) {
      const own = readRunSummary(slot.reportDir);
      const zoneSlot = slot.scenarios.some((id) => zoneIds.has(id));
      expect(
        slot.scenarios.every((id) => zoneIds.has(id)),
        `cluster ${slot.index}: ${slot.scenarios.join(", ")}`,
      ).to.equal(zoneSlot);
      expect(own.environment?.cluster ?? "").to.contain(zoneSlot ? "12 KWOK workers" : "3 KWOK workers");
    }
    expect(summary.parallel?.chosenBy).to.contain(
      "1 of them with 12 workers for the 4 scenario(s) that need more than 3",
    );
  });
});
