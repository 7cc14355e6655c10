// A scenario file on a real kind cluster (test:full): the 30 s toleration example — a Deployment
// with its own tolerationSeconds, the node of one of its pods stopped — with its windows derived
// from its own spec and its budgets checked against real kubelets; nothing left after.
// (Not the database example: kind's default StorageClass is node-local (local-path), so its
// StatefulSet cannot come back on another node, which the workload model does not know yet.)
import { expect } from "chai";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../lib/util/fixtures.js";
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
});
