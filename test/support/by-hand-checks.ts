// What the by-hand node-loss scenarios must show, on any provider whose volumes attach (the sim's
// KWOK stage, kind's rekindle-csi): test/full/by-hand.test.ts (sim) and kind-by-hand.test.ts (kind).
import { expect } from "chai";
import { FORCED_DETACH_WAIT_MS } from "../../lib/expect/model.js";
import type { ScenarioSummary } from "../../lib/report/summary.js";

export const BY_HAND_SCENARIOS = [
  "node-loss/force-delete-by-hand",
  "node-loss/drain-by-hand",
  "node-loss/force-delete-detach-disabled",
] as const;

function at(s: ScenarioSummary | undefined, milestone: string): number {
  const m = s?.milestones.find((x) => x.name === milestone);
  expect(m, `${s?.id ?? "?"}: milestone ${milestone}`).to.not.equal(undefined);
  return m?.atMs ?? Number.NaN;
}

function names(s: ScenarioSummary | undefined): string[] {
  return s?.milestones.map((m) => m.name) ?? [];
}

/** Force delete or drain: the pod goes at once, Multi-Attach blocks, the volume moves after 6 minutes. */
export function expectSixMinuteDetach(s: ScenarioSummary | undefined): void {
  const gone = at(s, "statefulset:pod-gone");
  expect(gone - at(s, "released-by-hand")).to.be.within(0, 2_000);
  expect(at(s, "multi-attach")).to.be.within(gone, gone + 3_000);
  // The upstream constant, measured: never before it, and not long after.
  const detach = at(s, "va-detach-started") - gone;
  expect(detach).to.be.within(FORCED_DETACH_WAIT_MS, FORCED_DETACH_WAIT_MS + 5_000);
  expect(at(s, "forced-detach:timeout") - gone).to.be.within(
    FORCED_DETACH_WAIT_MS,
    FORCED_DETACH_WAIT_MS + 5_000,
  );
  expect(at(s, "statefulset:recovered")).to.be.above(at(s, "va-attached-elsewhere"));
  // The StatefulSet without a volume is back within seconds; the dead kubelet's report never changed.
  expect(at(s, "statefulset-plain:recovered") - gone).to.be.below(5_000);
  expect(names(s)).to.not.include("volumes-in-use-changed");
}

/** The plain drain times out on the Terminating StatefulSet pods; the second, with no grace, frees them. */
export function expectDrainTwice(s: ScenarioSummary | undefined): void {
  const started = at(s, "drain-started");
  expect(at(s, "statefulset:pod-deletion-requested") - started).to.be.below(2_000);
  expect(at(s, "drain-timed-out")).to.be.below(at(s, "released-by-hand") + 1);
  expect(at(s, "statefulset:pod-gone")).to.be.above(at(s, "drain-timed-out"));
  // The Deployment's pods went with the first drain, long before the second.
  expect(at(s, "deployment:recovered")).to.be.below(at(s, "drain-timed-out"));
}

/** --disable-force-detach-on-timeout: no timeout detach; the volume moves only after the out-of-service taint. */
export function expectDetachOnlyAfterTaint(s: ScenarioSummary | undefined): void {
  expect(names(s)).to.not.include("forced-detach:timeout");
  const taint = at(s, "taint-added:node.kubernetes.io/out-of-service");
  expect(taint - at(s, "statefulset:pod-gone")).to.be.above(FORCED_DETACH_WAIT_MS);
  expect(at(s, "va-detach-started")).to.be.at.least(taint);
  expect(at(s, "forced-detach:out-of-service")).to.be.at.least(taint - 1_000);
  expect(at(s, "statefulset:recovered")).to.be.above(taint);
}
