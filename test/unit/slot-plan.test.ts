// A --parallel cluster's part of the run's plan: it survives JSON into the RunPlan the cluster's
// process runs (its families or files, profile, repeat, pattern, its own sim cluster and report
// directory), and a malformed one is refused naming the field, as the harness's bug.
import { expect } from "chai";
import { join } from "node:path";
import type { SimClusterSpec } from "../../lib/cluster/cluster-spec.js";
import type { RunFlags } from "../../lib/run/run-flags.js";
import { planRun } from "../../lib/run/run-plan.js";
import { readSlotPlan, slotPlan, slotRunPlan, type SlotPlan } from "../../lib/run/slot-plan.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { silentProgress } from "../../lib/util/progress.js";
import { rekindleThrow } from "../support/assertions.js";

const CLUSTER: SimClusterSpec = { provider: "sim", workers: 6, zones: 2 };
const DIR = "/tmp/reports/r/cluster-1";

/** The slot plan of `flags`' plan, through JSON as it crosses the IPC channel, and back into a RunPlan. */
async function roundTrip(flags: RunFlags) {
  const plan = await planRun(flags, { progress: silentProgress, testLog: "stderr", faultPhaseSpreadMs: 500 });
  const sent = slotPlan(plan, CLUSTER, DIR);
  return { plan, sent, received: slotRunPlan(readSlotPlan(JSON.parse(JSON.stringify(sent)))) };
}

describe("slot plan: a --parallel cluster's part of the run's plan", function () {
  it("families: the selection, profile, repeat and pattern arrive; the cluster and reports are its own", async function () {
    const { plan, received } = await roundTrip({
      provider: "sim",
      suite: ["preflight", "node-pressure"],
      profile: "fast",
      repeat: "2",
      scenario: "pressure",
      parallel: "2",
      "report-dir": "/tmp/reports/r",
    });
    expect(received).to.deep.equal({
      ...plan,
      cluster: CLUSTER,
      layout: { parallel: 1, byDefault: false, workersGiven: true },
      reportDir: DIR,
      allureHtml: false,
      allureHistory: undefined,
      shard: undefined,
    });
    expect(received.phaseSpreadMs).to.equal(500);
    expect(received.testLog).to.equal("stderr");
  });

  it("scenario files: loaded again to the same file plan, --repeat kept", async function () {
    // Loading and checking the files twice (the parent, then the cluster) takes seconds on a busy machine.
    this.timeout(60_000);
    const file = join(PROJECT_ROOT, "examples", "deployment-toleration-30s");
    const { plan, sent, received } = await roundTrip({ provider: "sim", file: [file], repeat: "3" });
    expect(sent.files).to.deep.equal({ paths: [file], repeat: 3 });
    expect(received.suites).to.deep.equal([]);
    expect(received.filePlan).to.deep.equal(plan.filePlan);
    expect(received.profile).to.deep.equal(plan.profile);
  });

  it("refuses a malformed one, naming the field (HARNESS_FAILED: the parent's bug, not the user's input)", async function () {
    const { sent } = await roundTrip({ provider: "sim", suite: ["preflight"] });
    const good = JSON.parse(JSON.stringify(sent)) as SlotPlan;
    const broken: [string, unknown][] = [
      ["the slot plan", null],
      ["suites", { ...good, suites: "preflight" }],
      ["profile", { ...good, profile: undefined }],
      ["repeat", { ...good, repeat: 0 }],
      ["cluster.provider", { ...good, cluster: { ...good.cluster, provider: "kind" } }],
      ["cluster.zones", { ...good, cluster: { provider: "sim", workers: 2, zones: 3 } }],
      ["reportDir", { ...good, reportDir: "relative/dir" }],
      ["testLog", { ...good, testLog: "stdin" }],
      ["files.paths", { ...good, files: { paths: [1] } }],
    ];
    for (const [field, value] of broken) {
      const error = rekindleThrow(() => readSlotPlan(value));
      expect(error.code, field).to.equal("HARNESS_FAILED");
      expect(error.message, field).to.include(`malformed plan: ${field} is`);
    }
    expect(readSlotPlan(good)).to.deep.equal(good);
  });

  it("checks its values again as planRun does: an unknown family is still bad input", function () {
    const plan: SlotPlan = {
      suites: ["node-los"],
      profile: "fast",
      repeat: 1,
      phaseSpreadMs: 0,
      cluster: CLUSTER,
      reportDir: DIR,
      testLog: "stdout",
    };
    const error = rekindleThrow(() => slotRunPlan(readSlotPlan(plan)));
    expect(error.code).to.equal("INVALID_INPUT");
    expect(error.message).to.include("node-loss");
  });
});
