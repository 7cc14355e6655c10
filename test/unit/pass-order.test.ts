// A pass decides for every node before it takes any fence's steps: holds and fence starts first
// (fence starts last among them), then the steps of the fences started and under way.
import { expect } from "chai";
import { decidingFirst } from "../../lib/controller/pass-order.js";
import type { NodePlan } from "../../lib/controller/plan.js";
import type { NodeFence } from "../../lib/controller/fence-state.js";

const fence: NodeFence = {
  apiVersion: "rekindle.dev/v1alpha1",
  kind: "NodeFence",
  metadata: { name: "b" },
  spec: { node: "b" },
};
const plans: { name: string; plan: NodePlan }[] = [
  { name: "a", plan: { kind: "fence", lostBecause: "x", previous: undefined, rate: "primary" } },
  { name: "b", plan: { kind: "progress", fence, health: { state: "unhealthy", reason: "x" } } },
  { name: "c", plan: { kind: "hold", reason: "ZoneBudget", message: "m", lostBecause: "x" } },
  { name: "d", plan: { kind: "none", healthy: true } },
  { name: "e", plan: { kind: "fence", lostBecause: "x", previous: undefined, rate: "unmetered" } },
  { name: "f", plan: { kind: "release", fence } },
  { name: "g", plan: { kind: "wait-for-peers", waiting: ["a"] } },
  { name: "h", plan: { kind: "supersede", fence } },
];

describe("controller: the order of a pass's work", function () {
  it("decides for every node first, fence starts last among the decisions, in plan order", function () {
    const { deciding, stepping } = decidingFirst(plans);
    expect(deciding.map((p) => p.name)).to.deep.equal(["c", "d", "g", "a", "e"]);
    expect(
      stepping.map((p) => p.name),
      "the steps of fences under way",
    ).to.deep.equal(["b", "f", "h"]);
  });
});
