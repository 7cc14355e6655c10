// The generated docs pages are current: docs/scenarios.md is what `rekindle list --markdown`
// prints now, docs/measurements.md what bench/results/*.json give now. A change to a scenario's
// windows or a new results file fails here until `npm run docs` is run and its output committed.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import {
  MEASUREMENTS_PAGE,
  measurementsPageText,
  SCENARIOS_PAGE,
  scenariosPageText,
} from "../../tools/docs/pages.js";
import { main } from "../../lib/cli/main.js";
import { timingProfile } from "../../lib/cluster/profiles.js";
import { scenarioCatalogue } from "../../lib/cli/catalogue.js";
import { allScenarios } from "../../suites/index.js";
import { cli } from "../support/cli-capture.js";

const STALE = "is stale: run `npm run docs` and commit the result";

describe("generated docs pages", function () {
  it("docs/scenarios.md is what `rekindle list --markdown` prints now", async function () {
    const { code, stdout } = await cli(["list", "--markdown"]);
    expect(code).to.equal(0);
    expect(stdout, "rekindle list --markdown and npm run docs disagree").to.equal(scenariosPageText());
    expect(readFileSync(SCENARIOS_PAGE, "utf8") === stdout, `docs/scenarios.md ${STALE}`).to.equal(true);
  });

  it("docs/measurements.md is what bench/results/*.json give now", function () {
    expect(
      readFileSync(MEASUREMENTS_PAGE, "utf8") === measurementsPageText(),
      `docs/measurements.md ${STALE}`,
    ).to.equal(true);
  });

  it("the catalogue lists every scenario with each expected milestone and its reason", function () {
    const fast = timingProfile("fast");
    const page = scenarioCatalogue({ profiles: [fast] });
    for (const scenario of allScenarios()) {
      expect(page).to.include(`### ${scenario.id} (fast)`);
    }
    // A milestone row carries its window and the knob behind it, as `rekindle list` prints it.
    expect(page).to.match(/\| `node-ready-unknown` \| 5s–14s \| lease renewed every 2000 ms; [^|]+ \|/);
    expect(page).to.match(/\| `statefulset:pod-gone` \| never \| no kubelet confirms the deletion/);
    expect(page).to.include("after `taint-added:node.kubernetes.io/out-of-service`");
    expect(page).not.to.include("## Profile `default`");
  });

  it("--markdown --profile P prints that profile only; a bad profile is exit 2", async function () {
    const { code, stdout } = await cli(["list", "--markdown", "--profile", "fast"]);
    expect(code).to.equal(0);
    expect(stdout).to.include("## Profile `fast`").and.not.include("## Profile `default`");
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = () => true;
    try {
      expect(await main(["list", "--markdown", "--profile", "slow"])).to.equal(2);
    } finally {
      process.stderr.write = original;
    }
  });
});
