// The gate allows no excuse (test/support/excuses.ts): a run whose verdict passed only through the
// kubelet-retry allowance fails the test that ran it, naming the scenario and the milestone.
import { expect } from "chai";
import { dirname } from "node:path";
import type { ExpectedMilestone } from "../../lib/expect/model.js";
import { summarizeScenario } from "../../lib/report/summary.js";
import { concludeScenario } from "../../lib/scenario/verdict.js";
import { excuseError, excusesIn, expectNoExcuse } from "../support/excuses.js";
import { runSummary, scenarioRun, writeSummaries } from "../support/summaries.js";

const expected: ExpectedMilestone[] = [
  { name: "db:replacement-created", after: "fault-injected", minMs: 0, maxMs: 10_000, why: "at once" },
  { name: "db:recovered", after: "db:replacement-created", minMs: 0, maxMs: 5_000, why: "start" },
];

/** A verdict of db recovering at `recoveredMs`, its replacement refused a PVC read at `retryMs`. */
async function verdict(recoveredMs: number, retryMs: number) {
  const {
    checks: _checks,
    chart: _chart,
    ...run
  } = await concludeScenario({
    title: "node-loss/controller",
    subtitle: "kind",
    expected,
    milestones: [
      { name: "fault-injected", atMs: 0 },
      { name: "db:replacement-created", atMs: 2_000 },
      { name: "db:kubelet-retry", atMs: retryMs },
      { name: "db:recovered", atMs: recoveredMs },
    ],
    failure: undefined,
    recoveryOf: ["db"],
  });
  return run;
}

describe("the gate allows no excused milestone", function () {
  it("a run that passed only through the kubelet-retry excuse fails, naming scenario and milestone", async function () {
    // Window ends at 7 s; recovered at 15 s, 12 s after the refused read: excused, so it passed.
    const excused = await verdict(15_000, 3_000);
    expect(excused.outcome).to.equal("passed");
    const summary = runSummary([
      summarizeScenario("node-loss/controller", [excused], []),
      summarizeScenario("node-loss/baseline", [scenarioRun({ "db:recovered": 4_000 }, 4_000)], []),
    ]);
    expect(excusesIn(summary)).to.have.length(1);
    const message = excuseError(summary)?.message ?? "";
    expect(message).to.match(
      /needed 1:\n {2}node-loss\/controller \(run 1\/1\): db:recovered at 15\.0s: window \+ 15s/,
    );
    expect(message).to.include("db:kubelet-retry");
    expect(message).not.to.include("node-loss/baseline");
    const [path] = writeSummaries([summary]);
    expect(() => {
      expectNoExcuse(dirname(path ?? ""));
    }).to.throw(/node-loss\/controller .*db:recovered/);
  });

  it("a run that needed no excuse passes, also when the allowance did not apply and it failed", async function () {
    // Recovered 9 s after the refused read: less than the kubelet's 10 s backoff, so not excused.
    const late = await verdict(15_000, 6_000);
    expect(late.outcome).to.equal("failed");
    const onTime = await verdict(6_000, 3_000);
    expect(onTime.outcome).to.equal("passed");
    const summary = runSummary([summarizeScenario("node-loss/controller", [late, onTime], [])]);
    expect(excuseError(summary)).to.equal(undefined);
    const [path] = writeSummaries([summary]);
    expect(() => {
      expectNoExcuse(dirname(path ?? ""));
    }).not.to.throw();
  });

  it("has nothing to check where a run wrote no summary", function () {
    const [path] = writeSummaries(["{ not json"]);
    expect(() => {
      expectNoExcuse(dirname(path ?? ""));
    }).not.to.throw();
    expect(() => {
      expectNoExcuse("/nonexistent-rekindle-report");
    }).not.to.throw();
  });
});
