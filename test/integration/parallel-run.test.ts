// `rekindle run` side by side (its default on the sim) end to end, with a selection that mixes the
// zone-disruption family (12 workers at the fast profile) with scenarios written for the default 3
// workers: the gate's family run (test/support/gate-sim-run.ts). Clusters sized for the
// zone-disruption scenarios run only those, the others keep the default layout, and the joined
// reports hold them all. The zone-disruption family runs in the gate here.
import { expect } from "chai";
import { scenarios as zoneDisruptionScenarios } from "../../suites/zone-disruption/index.js";
import { gateSimRun, passedScenariosOf, type GateSimRun } from "../support/gate-sim-run.js";
import { readRunSummary } from "../support/rekindle-run.js";

describe("rekindle run side by side: the zone-disruption family on clusters of its size beside default-sized ones (sim, fast profile)", function () {
  let run: GateSimRun;

  before(async function () {
    run = await gateSimRun(this);
  });

  it("runs every zone-disruption scenario, all passing, none skipped", function () {
    const ids = passedScenariosOf(run, "zone-disruption").map((s) => s.id);
    expect(ids).to.deep.equal(zoneDisruptionScenarios.map((s) => s.id));
  });

  it("ran the zone-disruption scenarios on clusters of 12 workers, nothing else there, and the rest on clusters of 3", function () {
    const slots = run.summary.parallel?.slots ?? [];
    expect(slots.length, run.summary.parallel?.chosenBy).to.be.at.least(2);
    const zoneIds = new Set(zoneDisruptionScenarios.map((s) => s.id));
    const sizes = slots.map((slot) => {
      const cluster = readRunSummary(slot.reportDir).environment?.cluster ?? "";
      const big = cluster.includes("12 KWOK workers");
      if (!big) expect(cluster, `cluster ${slot.index}`).to.contain("3 KWOK workers");
      for (const id of slot.scenarios)
        expect(zoneIds.has(id), `cluster ${slot.index} (${big ? 12 : 3} workers) ran ${id}`).to.equal(big);
      return big;
    });
    expect(sizes, "clusters of 12 workers").to.include(true);
    expect(sizes, "clusters of 3 workers").to.include(false);
    expect(run.summary.parallel?.chosenBy).to.match(
      /\d+ of them with 12 workers for the 4 scenario\(s\) that need more than 3/,
    );
  });
});
