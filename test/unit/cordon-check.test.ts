import { expect } from "chai";
import { RekindleError } from "../../lib/errors.js";
import { leftCordoned } from "../../lib/scenario/cordon-check.js";

describe("a scenario gives back every node it cordoned", function () {
  it("passes when the cordoned nodes after the undos are those cordoned before", function () {
    const faulted = ["w1", "w2", "w3"];
    expect(leftCordoned("node-loss/drain-by-hand", new Set(), new Set(), faulted)).to.equal(undefined);
    expect(leftCordoned("node-loss/drain-by-hand", new Set(["w1"]), new Set(["w1"]), faulted)).to.equal(
      undefined,
    );
    // Uncordoned meanwhile by someone else: not the scenario's doing, not a leftover.
    expect(leftCordoned("node-loss/drain-by-hand", new Set(["w1"]), new Set(), faulted)).to.equal(undefined);
  });

  it("leaves nodes the fault never touched to whoever cordoned them (an autoscaler, an operator)", function () {
    expect(leftCordoned("node-loss/drain-by-hand", new Set(), new Set(["w9"]), ["w1"])).to.equal(undefined);
  });

  it("names the scenario and every node it left cordoned, and how to fix it", function () {
    const error = leftCordoned("node-loss/drain-by-hand", new Set(["w1"]), new Set(["w3", "w1", "w2"]), [
      "w3",
      "w2",
      "w1",
    ]);
    expect(error).to.be.instanceOf(RekindleError);
    expect(error?.code).to.equal("PRECONDITION");
    expect(error?.message).to.equal(
      "node-loss/drain-by-hand left w2, w3 cordoned (schedulable before it; its undos ran)",
    );
    expect(error?.hint).to.include("kubectl uncordon w2 w3");
    expect(error?.details).to.deep.equal({ leftCordoned: ["w2", "w3"] });
  });
});
