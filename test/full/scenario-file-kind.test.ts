// A scenario file on a real kind cluster (test:full): the database example — a StatefulSet with a
// PodDisruptionBudget and a volume, its node stopped, the recovery controller — with its windows
// derived from its own spec for kind's storage (no attach step) and its budgets checked against
// real kubelets; nothing left after.
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

  it("examples/database-pdb-controller passes with its budgets met; the cluster is gone after", async function () {
    const reportDir = testRunDir("scenario-file-kind");
    const before = inotifyLimits();
    const result = await runOnKindFast(this, {
      cluster: CLUSTER,
      reportDir,
      files: [join(PROJECT_ROOT, "examples", "database-pdb-controller")],
      timeoutMs: 20 * 60_000,
    });
    const summary = expectKindRunPassed(result, reportDir);
    const [scenario] = summary.scenarios;
    expect(scenario?.id).to.equal("file/database-pdb-controller");
    expect(scenario?.outcome, scenario?.error ?? "").to.equal("passed");
    expect(scenario?.budgets?.map((b) => [b.budget, b.passed])).to.deep.equal([
      ["recoveredWithin", true],
      ["servingWithin", true],
      ["neverReadyOnTwoNodes", true],
    ]);
    await expectNothingLeft(kind, CLUSTER, before);
  });
});
