import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { shippedControllerSettings } from "../../lib/controller/shipped-deployment.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { KIND_CI_SCENARIO_PATTERN, KIND_CI_SUITES } from "../support/kind-ci-scenarios.js";

interface Step {
  name?: string;
  run?: string;
  env?: Record<string, string>;
}

/** The words of a shell command line, single-quoted words kept whole (all the workflow uses). */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? "");
}

describe("the e2e-kind workflow", function () {
  const workflow = parse(
    readFileSync(join(PROJECT_ROOT, ".github", "workflows", "e2e-kind.yml"), "utf8"),
  ) as {
    jobs: Record<string, { steps: Step[] }>;
  };
  const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
  const run = steps.find((step) => step.run?.includes("rekindle run") === true);
  const argv = words(run?.run ?? "");
  const values = (flag: string) => argv.flatMap((word, i) => (word === flag ? [argv[i + 1] ?? ""] : []));

  it("runs the scenarios rekindle's own CI runs on kind, and no others", function () {
    expect(values("--suite")).to.deep.equal([...KIND_CI_SUITES]);
    expect(values("--scenario")).to.deep.equal([KIND_CI_SCENARIO_PATTERN]);
    expect(values("--provider")).to.deep.equal(["kind"]);
    expect(values("--profile")).to.deep.equal(["fast"]);
  });

  it("builds the controller image the shipped Deployment names, and has rekindle use it as it is", function () {
    const build = steps.find((step) => step.run?.startsWith("docker build") === true);
    expect(build?.run).to.equal(`docker build -t ${shippedControllerSettings().image} .`);
    expect(run?.env?.["REKINDLE_CONTROLLER_IMAGE"]).to.equal("engine");
  });
});
