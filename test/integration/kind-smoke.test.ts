// The gate's real-kind smoke run: node-loss/controller on a real kind cluster (real kubelets in
// kind node containers, rekindle's offline node image, fast profile), as a user types it, then a
// check that nothing is left. Every other kind family runs in `npm run test:full`
// (test/full/kind-suites.test.ts).
import { expect } from "chai";
import { execa } from "execa";
import { kindForTests, passingKindRun } from "../support/kind-run.js";
import { REKINDLE_BIN } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";

const CLUSTER = "rekindle-it-smoke";
const SCENARIO = "node-loss/controller";

describe("kind smoke run (offline node image, fast profile)", function () {
  let kind: string;

  before(async function () {
    kind = await kindForTests(this);
  });

  it("refuses an unknown --image before touching any engine, naming the valid choices", async function () {
    const result = await execa(
      process.execPath,
      [REKINDLE_BIN, "run", "--provider", "kind", "--image", "nope", "--cluster-name", CLUSTER],
      { reject: false, timeout: 60_000 },
    );
    expect(result.exitCode).to.equal(2);
    expect(result.stderr).to.include(
      'unknown --image "nope"; valid: auto, kindest, rekindle, <image reference>',
    );
  });

  it(`${SCENARIO} passes on real kubelets: fenced, tainted out-of-service, every workload back; nothing left after`, async function () {
    const summary = await passingKindRun(this, kind, {
      cluster: CLUSTER,
      reportDir: testRunDir("kind-smoke"),
      suites: ["node-loss"],
      scenario: `${SCENARIO} —`,
      timeoutMs: 15 * 60_000,
    });
    expect(summary.scenarios.map((s) => [s.id, s.outcome])).to.deep.equal([[SCENARIO, "passed"]]);
    expect(summary.scenarios[0]?.recoveryMs, "recovered").to.be.a("number");
  });
});
