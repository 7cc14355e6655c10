// Scenario files on a real kind cluster (test:full): the 30 s toleration example — a Deployment
// with its own tolerationSeconds, the node of one of its pods stopped — with its windows derived
// from its own spec and its budgets checked against real kubelets; and the HTTP probe example, whose
// Service is probed from inside the cluster (kind only: the sim refuses probes); and the node-local
// volume example, whose StatefulSet can come back only on its own node, once the partition heals.
// Nothing left after. (Not the database example: its claim takes the default class, rekindle-csi
// here, and the sim's runs cover it.)
import { expect } from "chai";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import type { ScenarioSummary } from "../../lib/report/summary.js";
import { kindForTests, passingKindRun } from "../support/kind-run.js";
import { allowFor } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";

const CLUSTER = "rekindle-it-file";

/**
 * examples/<name> alone on the cluster (reports in the test run dir `report`): the run passed,
 * nothing is left, its one scenario passed. Returns that scenario.
 */
async function passingExample(
  context: Mocha.Context,
  kind: string,
  name: string,
  report: string,
): Promise<ScenarioSummary | undefined> {
  const summary = await passingKindRun(context, kind, {
    cluster: CLUSTER,
    reportDir: testRunDir(report),
    files: [join(PROJECT_ROOT, "examples", name)],
    timeoutMs: 20 * 60_000,
  });
  const [scenario] = summary.scenarios;
  expect(scenario?.id).to.equal(`file/${name}`);
  expect(scenario?.outcome, scenario?.error ?? "").to.equal("passed");
  return scenario;
}

/** When the scenario's milestone `name` came (ms after the fault), if it did. */
function milestoneAt(scenario: ScenarioSummary | undefined, name: string): number | undefined {
  return scenario?.milestones.find((m) => m.name === name)?.atMs;
}

describe("a scenario file on a real kind cluster (offline node image, fast profile)", function () {
  let kind: string;

  before(async function () {
    allowFor(this, 45 * 60_000);
    kind = await kindForTests(this);
  });

  it("examples/deployment-toleration-30s passes with its budgets met; the cluster is gone after", async function () {
    const scenario = await passingExample(this, kind, "deployment-toleration-30s", "scenario-file-kind");
    expect(scenario?.budgets?.map((b) => [b.budget, b.passed])).to.deep.equal([
      ["recoveredWithin", true],
      ["maxUnavailable", true],
    ]);
  });

  it("examples/http-probe-kind: the probe fails with the node and answers again once serving; budgets met", async function () {
    const scenario = await passingExample(this, kind, "http-probe-kind", "scenario-file-kind-probe");
    const at = (name: string) => milestoneAt(scenario, name);
    const failing = at("web:probe-failing");
    const serving = at("web:serving");
    const answering = at("web:answering");
    expect(failing, "web:probe-failing").to.be.a("number");
    expect(answering, "web:answering").to.be.a("number");
    // The probe goes through the Service: it answers only once the Service has its endpoint back.
    expect(answering).to.be.at.least(serving ?? Number.POSITIVE_INFINITY);
    expect(scenario?.recoveryMs, "recovered means answering too").to.be.closeTo(
      Math.max(at("web:recovered") ?? 0, serving ?? 0, answering ?? 0),
      1,
    );
    expect(scenario?.budgets?.map((b) => [b.budget, b.passed])).to.deep.equal([
      ["recoveredWithin", true],
      ["servingWithin", true],
    ]);
  });

  it("examples/local-volume-partition: the StatefulSet comes back on its own node after the heal, not before", async function () {
    const scenario = await passingExample(this, kind, "local-volume-partition", "scenario-file-kind-local");
    const at = (name: string) => milestoneAt(scenario, name);
    const healed = at("partition-healed");
    expect(healed, "partition-healed").to.be.a("number");
    // The volume is on the partitioned node: nothing can be Ready elsewhere before it is back.
    expect(at("journal:replacement-ready"), "journal:replacement-ready").to.be.at.least(healed ?? Infinity);
    expect(at("journal:duplicate-ready"), "never Ready on two nodes").to.equal(undefined);
    expect(scenario?.budgets?.map((b) => [b.budget, b.passed])).to.deep.equal([
      ["recoveredWithin", true],
      ["servingWithin", true],
      ["neverReadyOnTwoNodes", true],
    ]);
  });
});
