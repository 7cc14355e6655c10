// The operator's reflexes on a lost node on real kubelets (issue 23 item 2): force delete, drain,
// and force delete under --disable-force-detach-on-timeout (set on kind's kube-controller-manager
// static pod), on a kind cluster rekindle makes, whose default class rekindle-csi attaches
// (notes/csi-attach.md). Seed 004's finding: Multi-Attach, then the 6-minute forced detach. One
// cluster, the three scenarios one after another (≈ 7 min each), as a user runs them.
import { expect } from "chai";
import type { RunSummary } from "../../lib/report/summary.js";
import {
  BY_HAND_SCENARIOS,
  expectDetachOnlyAfterTaint,
  expectDrainTwice,
  expectSixMinuteDetach,
} from "../support/by-hand-checks.js";
import { kindForTests, passingKindRun } from "../support/kind-run.js";
import { allowFor } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";

const CLUSTER = "rekindle-it-by-hand";

describe("node loss released by hand on real kubelets (kind, rekindle-csi, fast profile)", function () {
  let summary: RunSummary | undefined;
  const scenario = (id: string) => summary?.scenarios.find((s) => s.id === id);

  before(async function () {
    allowFor(this, 40 * 60_000);
    const kind = await kindForTests(this);
    summary = await passingKindRun(this, kind, {
      cluster: CLUSTER,
      reportDir: testRunDir("kind-by-hand"),
      suites: ["node-loss"],
      scenario: `(${BY_HAND_SCENARIOS.join("|")}) —`,
      timeoutMs: 35 * 60_000,
    });
  });

  it("runs the three scenarios, all passing", function () {
    expect(summary?.scenarios.map((s) => [s.id, s.outcome])).to.deep.equal(
      BY_HAND_SCENARIOS.map((id) => [id, "passed"]),
    );
  });

  for (const id of ["node-loss/force-delete-by-hand", "node-loss/drain-by-hand"]) {
    it(`${id}: Multi-Attach, then the forced detach 360 s (+5 s) after the pod is gone, from kube-controller-manager's log`, function () {
      expectSixMinuteDetach(scenario(id));
    });
  }

  it("drain-by-hand: the plain drain times out on the Terminating StatefulSet pods; the second, with no grace, frees them", function () {
    expectDrainTwice(scenario("node-loss/drain-by-hand"));
  });

  it("force-delete-detach-disabled: no timeout detach; the volume moves only after the out-of-service taint", function () {
    expectDetachOnlyAfterTaint(scenario("node-loss/force-delete-detach-disabled"));
  });
});
