import { expect } from "chai";
import { RekindleError } from "../../lib/errors.js";
import { validateRunOptions } from "../../lib/run/runner.js";

describe("run options: the fault phase spread", function () {
  it("takes 0 to 60 s, and refuses the rest naming the valid range", function () {
    for (const ok of [0, 10_000, 60_000]) {
      expect(() => validateRunOptions({ provider: "sim", faultPhaseSpreadMs: ok })).to.not.throw();
    }
    for (const bad of [-1, 60_001, Number.NaN]) {
      try {
        validateRunOptions({ provider: "sim", faultPhaseSpreadMs: bad });
        expect.fail(`${bad} was accepted`);
      } catch (error) {
        expect(error).to.be.instanceOf(RekindleError);
        expect((error as RekindleError).code).to.equal("INVALID_INPUT");
        expect((error as RekindleError).message).to.include("a number from 0 to 60000");
      }
    }
  });
});
