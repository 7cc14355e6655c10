// Each suite family first on a fresh kind cluster, as a new user runs it (`rekindle run --provider
// kind --suite <family>`): the family's first scenario alone on a cluster created for it, then
// deleted. The other kind tests run families one after another on one cluster, where a scenario
// that works only on a cluster others have used already passes: node-pressure did, failing 3 of 3
// first runs on a fresh cluster (issue 23). One scenario per family keeps it to a cluster boot and
// a scenario each (about 1–3 min here); the families' later scenarios run in kind-suites.test.ts.
import { expect } from "chai";
import { KIND_CI_FAMILY_FIRSTS } from "../support/kind-ci-scenarios.js";
import { kindForTests, passingKindRun } from "../support/kind-run.js";
import { testRunDir } from "../support/run-dir.js";

const CLUSTER = "rekindle-it-fresh";

describe("each family first on a fresh kind cluster (offline node image, fast profile)", function () {
  let kind: string;

  before(async function () {
    kind = await kindForTests(this);
  });

  for (const id of KIND_CI_FAMILY_FIRSTS) {
    const family = id.slice(0, id.indexOf("/"));
    it(`${id} passes as the first scenario of a new cluster; nothing left after`, async function () {
      const summary = await passingKindRun(this, kind, {
        cluster: CLUSTER,
        reportDir: testRunDir(`kind-fresh-${family}`),
        suites: [family],
        scenario: `${id} —`,
        timeoutMs: 15 * 60_000,
      });
      expect(summary.scenarios.map((s) => [s.id, s.outcome])).to.deep.equal([[id, "passed"]]);
    });
  }
});
