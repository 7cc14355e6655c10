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
import {
  expectKindRunPassed,
  expectNothingLeft,
  inotifyLimits,
  kindMissing,
  prepareKind,
  runOnKindFast,
} from "../support/kind-run.js";
import { requirePrerequisite } from "../support/prerequisites.js";
import { allowFor } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";

const CLUSTER = "rekindle-it-file";

describe("a scenario file on a real kind cluster (offline node image, fast profile)", function () {
  let kind: string;

  before(async function () {
    allowFor(this, 45 * 60_000);
    requirePrerequisite(this, await kindMissing());
    kind = await prepareKind(this);
  });

  it("examples/deployment-toleration-30s passes with its budgets met; the cluster is gone after", async function () {
    const reportDir = testRunDir("scenario-file-kind");
    const before = inotifyLimits();
    const result = await runOnKindFast(this, {
      cluster: CLUSTER,
      reportDir,
      files: [join(PROJECT_ROOT, "examples", "deployment-toleration-30s")],
      timeoutMs: 20 * 60_000,
    });
    const summary = expectKindRunPassed(result, reportDir);
    const [scenario] = summary.scenarios;
    expect(scenario?.id).to.equal("file/deployment-toleration-30s");
    expect(scenario?.outcome, scenario?.error ?? "").to.equal("passed");
    expect(scenario?.budgets?.map((b) => [b.budget, b.passed])).to.deep.equal([
      ["recoveredWithin", true],
      ["maxUnavailable", true],
    ]);
    await expectNothingLeft(kind, CLUSTER, before);
  });

  it("examples/http-probe-kind: the probe fails with the node and answers again once serving; budgets met", async function () {
    const reportDir = testRunDir("scenario-file-kind-probe");
    const before = inotifyLimits();
    const result = await runOnKindFast(this, {
      cluster: CLUSTER,
      reportDir,
      files: [join(PROJECT_ROOT, "examples", "http-probe-kind")],
      timeoutMs: 20 * 60_000,
    });
    const summary = expectKindRunPassed(result, reportDir);
    const [scenario] = summary.scenarios;
    expect(scenario?.id).to.equal("file/http-probe-kind");
    expect(scenario?.outcome, scenario?.error ?? "").to.equal("passed");
    const at = (name: string) => scenario?.milestones.find((m) => m.name === name)?.atMs;
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
    await expectNothingLeft(kind, CLUSTER, before);
  });

  it("examples/local-volume-partition: the StatefulSet comes back on its own node after the heal, not before", async function () {
    const reportDir = testRunDir("scenario-file-kind-local");
    const before = inotifyLimits();
    const result = await runOnKindFast(this, {
      cluster: CLUSTER,
      reportDir,
      files: [join(PROJECT_ROOT, "examples", "local-volume-partition")],
      timeoutMs: 20 * 60_000,
    });
    const summary = expectKindRunPassed(result, reportDir);
    const [scenario] = summary.scenarios;
    expect(scenario?.id).to.equal("file/local-volume-partition");
    expect(scenario?.outcome, scenario?.error ?? "").to.equal("passed");
    const at = (name: string) => scenario?.milestones.find((m) => m.name === name)?.atMs;
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
    await expectNothingLeft(kind, CLUSTER, before);
  });
});
