// The suite families on a real kind cluster: real kubelets in kind node containers, booted from
// rekindle's offline node image (built here from Debian packages and Go modules, then cached), 1
// control plane and 3 workers in 2 zones, the fast profile. One `rekindle run` as a user types it,
// then a check that nothing is left: no cluster, no node containers, the host's inotify limits as
// they were.
import { expect } from "chai";
import { ensureControllerImage } from "../../lib/cluster/kind/image/controller-image.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { KIND_CI_SCENARIO_PATTERN, KIND_CI_SCENARIOS, KIND_CI_SUITES } from "../support/kind-ci-scenarios.js";
import { kindForTests, passingKindRun } from "../support/kind-run.js";
import { allowFor } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";

const CLUSTER = "rekindle-it-kind";
const SCENARIOS = KIND_CI_SCENARIOS;

describe("the suite families on a real kind cluster (offline node image, fast profile)", function () {
  let kind: string;

  before(async function () {
    allowFor(this, 45 * 60_000);
    kind = await kindForTests(this);
    // The in-cluster controller's image (node-loss/controller-in-cluster would build it itself).
    await ensureControllerImage({ progress: consoleProgress() });
  });

  it("node loss (the controller in-process and in-cluster), partition, zone outage, controller failover, graceful shutdown and node pressure (the real eviction manager) pass; the cluster and host settings are gone after", async function () {
    const summary = await passingKindRun(this, kind, {
      cluster: CLUSTER,
      reportDir: testRunDir("kind-suites"),
      suites: KIND_CI_SUITES,
      scenario: KIND_CI_SCENARIO_PATTERN,
      timeoutMs: 35 * 60_000,
    });
    expect(summary.scenarios.map((s) => [s.id, s.outcome])).to.deep.equal(
      SCENARIOS.map((id) => [id, "passed"]),
    );
    // The baseline's StatefulSet with a volume never comes back by itself; the other node losses do.
    expect(summary.scenarios.slice(0, 4).map((s) => s.recoveryMs === null)).to.deep.equal([
      true,
      false,
      false,
      false,
    ]);
  });
});
