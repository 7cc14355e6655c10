// The built-in node-loss scenarios take their windows from the workload model fed with the fixture
// workloads' manifests. Against the node-loss model they used before (model.ts): every window it
// stated, the same (the volume's now keyed by the workload), plus exactly the windows listed here.
// The Deployment's windows are the same whether the lost node held one of its pods or both.
import { expect } from "chai";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { shippedControllerSettings } from "../../lib/controller/shipped-deployment.js";
import { expectedNodeLoss, type ExpectedMilestone } from "../../lib/expect/model.js";
import { expectedControllerRecovery, nodeLossModelInputs } from "../../lib/scenario/common.js";
import { expectationInputs, type ExpectationInputs } from "../../lib/scenario/harness.js";
import { expectedNodeLossWindows, type NodeLossRecovery } from "../../lib/scenario/node-loss-expected.js";
import { scenarios } from "../../suites/node-loss.js";

const SHAPES = [
  { name: "sim", latencies: { podStartMs: 1000, attachMs: 500 }, volumeAttachRequired: true },
  { name: "kind", latencies: { podStartMs: 3000, attachMs: 0 }, volumeAttachRequired: false },
] as const;

type Case = "baseline" | "manual-out-of-service" | "controller" | "controller-in-cluster";

function recovery(c: Case, inputs: ExpectationInputs): NodeLossRecovery {
  switch (c) {
    case "baseline":
    case "manual-out-of-service":
      return { mode: c };
    case "controller":
      return { mode: "controller", controller: inputs.controller };
    case "controller-in-cluster":
      return { mode: "controller", controller: shippedControllerSettings().config };
  }
}

/** What the scenario expected before, from model.ts. */
function before(c: Case, inputs: ExpectationInputs): ExpectedMilestone[] {
  switch (c) {
    case "baseline":
    case "manual-out-of-service":
      return expectedNodeLoss({ ...nodeLossModelInputs(inputs), mode: c });
    case "controller":
      return expectedControllerRecovery(inputs);
    case "controller-in-cluster":
      return expectedControllerRecovery({ ...inputs, controller: shippedControllerSettings().config });
  }
}

/** model.ts's global volume milestones, as the workload model keys them. */
function keyed(name: string): string {
  return name === "va-gone" || name === "va-attached-elsewhere" ? `statefulset:${name}` : name;
}

/** The windows the workload model adds, each with its bound ("never" or finite). */
function added(c: Case): Record<string, "never" | "finite"> {
  const duplicates = {
    "statefulset:duplicate-ready": "never",
    "statefulset-plain:duplicate-ready": "never",
  } as const;
  if (c === "baseline")
    return {
      ...duplicates,
      "deployment:pod-gone": "never",
      "statefulset:recovered": "never",
      "statefulset-plain:recovered": "never",
    };
  return { ...duplicates, "deployment:pod-gone": "finite" };
}

/** The fast profile on the first shape, its volumes attached; `controllerManagerLogged` as given. */
const fastSimFacts = (controllerManagerLogged: boolean) => ({
  profile: TIMING_PROFILES.fast,
  eviction: TIMING_PROFILES.fast.simKubelet,
  latencies: SHAPES[0].latencies,
  volumeAttachRequired: true,
  controllerManagerLogged,
});

const bounds = (w: ExpectedMilestone | undefined) =>
  w && { name: w.name, after: w.after, minMs: w.minMs, maxMs: w.maxMs };

describe("node-loss scenarios: windows from the workload model", function () {
  for (const profile of [TIMING_PROFILES.default, TIMING_PROFILES.fast]) {
    for (const shape of SHAPES) {
      const inputs = expectationInputs({
        profile,
        eviction: profile.simKubelet,
        latencies: shape.latencies,
        volumeAttachRequired: shape.volumeAttachRequired,
        controllerManagerLogged: shape.name === "sim",
      });
      for (const c of ["baseline", "manual-out-of-service", "controller", "controller-in-cluster"] as const) {
        const label = `${profile.name}, ${shape.name}, node-loss/${c}`;
        const now = expectedNodeLossWindows(inputs, recovery(c, inputs));

        it(`${label}: every window of model.ts, the same (volume windows keyed by the workload)`, function () {
          for (const w of before(c, inputs)) {
            const name = keyed(w.name);
            expect(bounds(now.find((m) => m.name === name)), name).to.deep.equal(
              bounds({ ...w, name, after: keyed(w.after) }),
            );
          }
        });

        it(`${label}: no more than the listed windows on top`, function () {
          const known = new Set(before(c, inputs).map((w) => keyed(w.name)));
          const extra = Object.fromEntries(
            now.filter((w) => !known.has(w.name)).map((w) => [w.name, w.maxMs === null ? "never" : "finite"]),
          );
          expect(extra).to.deep.equal(added(c));
        });

        it(`${label}: the Deployment's windows the same with one of its pods lost or both`, function () {
          const lost = (deployment: number) =>
            expectedNodeLossWindows(
              inputs,
              recovery(c, inputs),
              new Map([
                ["deployment", deployment],
                ["statefulset", 1],
                ["statefulset-plain", 1],
              ]),
            ).map(bounds);
          expect(lost(1)).to.deep.equal(lost(2));
        });
      }
    }
  }

  it("a stop that leaves the power on (the existing provider's agent): the in-cluster controller's taint waits unhealthyAfter, not an early power read", function () {
    const facts = fastSimFacts(false);
    const inCluster = scenarios.find((s) => s.id === "node-loss/controller-in-cluster");
    const taint = (stopLeavesPowerOn: boolean) =>
      inCluster
        ?.expected(expectationInputs({ ...facts, stopLeavesPowerOn }))
        .find((w) => w.name === "taint-added:node.kubernetes.io/out-of-service");
    const unhealthyAfterMs = shippedControllerSettings().config.unhealthyAfterMs;
    // Measured on existing kind (test/full/existing-kind.test.ts, 2026-11-25): tainted 19.3 s after the stop.
    expect(taint(true)?.maxMs).to.be.at.least(unhealthyAfterMs);
    expect(taint(true)?.minMs).to.be.at.most(19_300);
    // A stop that powers the node off is read off at its first missed renewal: earlier.
    expect(taint(false)?.maxMs).to.be.below(unhealthyAfterMs);
  });

  it("the scenario as defined expects what the model gives (before a run: every pod on the lost node)", function () {
    const inputs = expectationInputs(fastSimFacts(true));
    const controller = scenarios.find((s) => s.id === "node-loss/controller");
    expect(controller?.expected(inputs)).to.deep.equal(
      expectedNodeLossWindows(inputs, { mode: "controller", controller: inputs.controller }),
    );
  });

  it("a workload with no pod on the lost node: untouched, its recovery not expected (so not awaited)", function () {
    const inputs = expectationInputs(fastSimFacts(true));
    const reach = new Map([
      ["deployment", 0],
      ["statefulset", 1],
      ["statefulset-plain", 0],
    ]);
    for (const mode of ["baseline", "manual-out-of-service"] as const) {
      const windows = expectedNodeLossWindows(inputs, { mode }, reach);
      for (const id of ["deployment", "statefulset-plain"]) {
        const mine = windows.filter((w) => w.name.startsWith(`${id}:`));
        expect(
          mine.map((w) => [w.name, w.maxMs]),
          `${mode}: ${id}`,
        ).to.deep.equal([
          [`${id}:pod-deletion-requested`, null],
          [`${id}:replacement-created`, null],
        ]);
      }
      expect(windows.find((w) => w.name === "statefulset:pod-deletion-requested")?.maxMs).to.not.equal(null);
    }
  });
});
