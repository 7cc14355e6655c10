import { expect } from "chai";
import { planRun } from "../../lib/run/run-plan.js";
import { silentProgress } from "../../lib/util/progress.js";
import { rekindleRejection } from "../support/assertions.js";

describe("run plan: the fault phase spread", function () {
  const plan = (faultPhaseSpreadMs: number) =>
    planRun({ provider: "sim" }, { progress: silentProgress, faultPhaseSpreadMs });

  it("takes 0 to 60 s, and refuses the rest naming the valid range", async function () {
    for (const ok of [0, 10_000, 60_000]) expect((await plan(ok)).phaseSpreadMs).to.equal(ok);
    for (const bad of [-1, 60_001, Number.NaN]) {
      const error = await rekindleRejection(plan(bad));
      expect(error.code).to.equal("INVALID_INPUT");
      expect(error.message).to.include("a number from 0 to 60000");
    }
  });
});
