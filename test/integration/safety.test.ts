// The `safety` family end to end through `rekindle run` on the sim provider (fast profile), side by
// side with the gate's other families (test/support/gate-sim-run.ts): every scenario injects one
// hostile condition and must pass, and the safety invariants its windows judge (no reachable node
// fenced, no out-of-service taint before a confirmed fence, one power-off per incident, nothing
// left behind) must hold in the recorded milestones themselves.
import { expect } from "chai";
import type { ScenarioSummary } from "../../lib/report/summary.js";
import { UNSAFE } from "../../lib/scenario/safety.js";
import { scenarios as safetyScenarios } from "../../suites/safety/index.js";
import { gateSimRun, passedScenariosOf } from "../support/gate-sim-run.js";

function names(s: ScenarioSummary): string[] {
  return s.milestones.map((m) => m.name);
}

describe("safety family on the sim provider (fast profile)", function () {
  let summary: { scenarios: ScenarioSummary[] };

  before(async function () {
    summary = { scenarios: passedScenariosOf(await gateSimRun(this), "safety") };
  });

  it("runs every safety scenario, all passing, nothing skipped", function () {
    expect(summary.scenarios.map((s) => s.id)).to.deep.equal(safetyScenarios.map((s) => s.id));
  });

  it("no scenario recorded an unsafe moment or a second power-off", function () {
    for (const s of summary.scenarios) {
      for (const unsafe of Object.values(UNSAFE)) expect(names(s), s.id).to.not.include(unsafe);
      expect(names(s), s.id).to.not.include("power-off:2");
    }
  });

  it("the fence of a node powered back on is abandoned before any out-of-service taint or force deletion", function () {
    for (const id of ["safety/powered-on-before-taint", "safety/powered-on-before-cleanup"]) {
      const s = summary.scenarios.find((x) => x.id === id);
      expect(s, id).to.not.equal(undefined);
      expect(names(s!), id).to.include.members(["event:FenceAbandoned", "fence:recovery:done"]);
      expect(names(s!), id).to.not.include("event:PodsForceDeleted");
    }
  });
});
