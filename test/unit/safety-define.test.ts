// suites/safety/define.ts: what safetyScenario adds to a scenario's own parts. The invariants come
// first, then the `never` table, then the windows; a second fence is derived only where the table
// forbids it; the check that nothing is left behind follows the scenario's own steps.
import { expect } from "chai";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { never } from "../../lib/expect/windows.js";
import type { Transition } from "../../lib/observe/types.js";
import { expectationInputs, type DeriveContext, type ScenarioContext } from "../../lib/scenario/harness.js";
import { SAFETY_MILESTONES, safetyExpectations } from "../../lib/scenario/safety.js";
import { FENCE_STARTED_TWICE, safetyScenario } from "../../suites/safety/define.js";

const inputs = expectationInputs({
  profile: TIMING_PROFILES.fast,
  eviction: TIMING_PROFILES.fast.simKubelet,
  latencies: { podStartMs: 1000, attachMs: 500 },
  volumeAttachRequired: true,
  controllerManagerLogged: true,
});

const fenceStarted = (atMs: number, node: string): Transition => ({
  name: "event",
  atMs,
  node,
  subject: { kind: "Event", name: `e-${atMs}`, namespace: "default" },
  source: "watch",
  detail: { reason: "FenceStarted" },
});

const derive: DeriveContext = { faultAtMs: 1_000, inputs, faultNodes: ["w1"], namespace: "ns" };

function scenario(once: boolean, steps: string[] = []) {
  return safetyScenario({
    id: "safety/test",
    title: "t",
    requires: ["lifecycle", "fencing"],
    powerOffs: 1,
    never: { "mark-a": "never a", ...(once ? { [FENCE_STARTED_TWICE]: "one fence" } : {}) },
    windows: () => [never("mark-b", "listed after the table")],
    marks: ["mark-a", "mark-b"],
    run: () => {
      steps.push("own step");
      return Promise.resolve();
    },
  });
}

describe("safety scenarios: the shared skeleton (safetyScenario)", function () {
  it("lists the invariants, then the never table, then the windows; runs the controller", function () {
    const definition = scenario(true);
    expect(definition.usesController).to.equal(true);
    expect(definition.expected(inputs).map((e) => e.name)).to.deep.equal([
      ...safetyExpectations(1).map((e) => e.name),
      "mark-a",
      FENCE_STARTED_TWICE,
      "mark-b",
    ]);
    expect(definition.recoveryOf).to.deep.equal([]);
    expect(definition.workloads("ns")).to.deep.equal([]);
  });

  it("derives a second fence, and declares it, only where the never table forbids one", function () {
    const twice = [fenceStarted(1_500, "w1"), fenceStarted(2_500, "w1")];
    expect(scenario(true).derive?.(twice, derive)).to.deep.equal([
      { name: FENCE_STARTED_TWICE, atMs: 1_500 },
    ]);
    expect(scenario(true).ownMilestones).to.include(FENCE_STARTED_TWICE);
    expect(scenario(false).derive?.(twice, derive)).to.deep.equal([]);
    expect(scenario(false).ownMilestones).to.deep.equal([...SAFETY_MILESTONES, "mark-a", "mark-b"]);
  });

  it("checks that the controller left nothing behind after the scenario's own steps", async function () {
    const steps: string[] = [];
    const context = {
      steps: {
        step: (name: string) => {
          steps.push(name);
          return Promise.resolve();
        },
      },
    } as unknown as ScenarioContext<"lifecycle" | "fencing">;
    await scenario(false, steps).run(context);
    expect(steps).to.deep.equal(["own step", "check the controller left nothing behind"]);
  });
});
