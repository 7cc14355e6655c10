// suites/safety/shared.ts's derive helper: the milestone at which every fault node has had an Event.
import { expect } from "chai";
import type { Transition } from "../../lib/observe/types.js";
import type { DeriveContext } from "../../lib/scenario/harness.js";
import { everyFaultNodeHad } from "../../suites/safety/shared.js";

const FAULT_AT = 1_000;
const context: DeriveContext = {
  faultAtMs: FAULT_AT,
  inputs: undefined as unknown as DeriveContext["inputs"],
  faultNodes: ["w1", "w2"],
  namespace: "ns",
};

const event = (atMs: number, node: string, reason: string): Transition => ({
  name: "event",
  atMs,
  node,
  subject: { kind: "Event", name: `e-${atMs}`, namespace: "default" },
  source: "watch",
  detail: { reason },
});

describe("safety scenarios: every fault node had an Event", function () {
  it("marks the Event that completes the set, after the fault, ignoring other reasons and other nodes", function () {
    const transitions = [
      event(900, "w2", "Held"), // before the fault: not counted
      event(1_100, "w1", "Held"),
      event(1_200, "w1", "Held"),
      event(1_300, "w3", "Held"), // not a fault node
      event(1_400, "w2", "Other"),
      event(1_500, "w2", "Held"),
      event(1_600, "w2", "Held"),
    ];
    expect(everyFaultNodeHad(transitions, context, "Held", "held-all")).to.deep.equal([
      { name: "held-all", atMs: 500, node: "w2" },
    ]);
  });

  it("marks nothing while a fault node has had none", function () {
    const transitions = [event(1_100, "w1", "Held"), event(1_900, "w1", "Held")];
    expect(everyFaultNodeHad(transitions, context, "Held", "held-all")).to.deep.equal([]);
  });
});
