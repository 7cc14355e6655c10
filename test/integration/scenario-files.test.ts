// Scenario files end to end on the sim, as a user types them: every example of examples/ the sim
// can run in one `rekindle run -f` (one cluster), each passing with its windows derived from its own
// workloads and its budgets checked (the others, such as an in-cluster probe, are kind's: test:full
// runs them there; the sim refuses them, tested in test/unit/scenario-file-plan.test.ts); and a
// manifest the API server rejects refused with exit 2, nothing left.
import { expect } from "chai";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunSummary } from "../../lib/report/summary.js";
import { findProcessesByRunTag } from "../../lib/util/daemon.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { loadScenarioFiles } from "../../lib/scenario-file/load.js";
import { providerRefusal } from "../../lib/scenario-file/provider-refusal.js";
import { execa } from "execa";
import { ensureSimBinaries } from "../../lib/build/sim-binaries.js";
import { allowFor, REKINDLE_BIN, runOnSimFast } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";

const EXAMPLES = join(PROJECT_ROOT, "examples");
/** Every example directory the sim can run: each holds one scenario.yaml. */
const EXAMPLE_NAMES = readdirSync(EXAMPLES, { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(join(EXAMPLES, e.name, "scenario.yaml")))
  .map((e) => e.name)
  .filter((name) =>
    loadScenarioFiles([join(EXAMPLES, name, "scenario.yaml")]).every(
      (file) => providerRefusal(file, "sim").length === 0,
    ),
  )
  .sort();

describe("scenario files on the sim: every example of examples/", function () {
  const reportDir = join(testRunDir("scenario-files"), "examples");
  let summary: RunSummary;
  let output = "";

  before(async function () {
    const files = EXAMPLE_NAMES.flatMap((name) => ["-f", join(EXAMPLES, name, "scenario.yaml")]);
    const run = await runOnSimFast(this, reportDir, ["--no-html", ...files], 30 * 60_000);
    output = `${run.stdout.slice(-8000)}\n${run.stderr.slice(-4000)}`;
    expect(existsSync(join(reportDir, "summary.json")), output).to.equal(true);
    summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
    expect(run.exitCode, output).to.equal(0);
  });

  it("finds the examples the issue asks for", function () {
    expect(EXAMPLE_NAMES).to.include.members([
      "database-pdb-controller",
      "deployment-toleration-30s",
      "zone-outage-spread",
      "memory-pressure-qos",
      "node-loss-fixtures",
      "local-volume-partition",
    ]);
  });

  for (const name of EXAMPLE_NAMES) {
    it(`${name}: passes, with windows keyed by its own workloads and its budgets listed as met`, function () {
      const scenario = summary.scenarios.find((s) => s.id === `file/${name}`);
      expect(scenario, `file/${name} in ${summary.scenarios.map((s) => s.id).join(", ")}`).to.not.equal(
        undefined,
      );
      if (scenario === undefined) return;
      expect(scenario.outcome, scenario.error ?? "").to.equal("passed");
      expect(scenario.expected.length).to.be.greaterThan(0);
      for (const run of scenario.runs) {
        for (const budget of run.budgets ?? []) expect(budget.passed, JSON.stringify(budget)).to.equal(true);
      }
    });
  }

  it("the database example's budgets were measured: recovered and serving within their limits", function () {
    const db = summary.scenarios.find((s) => s.id === "file/database-pdb-controller");
    const budgets = db?.runs[0]?.budgets ?? [];
    expect(budgets.map((b) => b.budget).sort()).to.deep.equal([
      "neverReadyOnTwoNodes",
      "recoveredWithin",
      "servingWithin",
    ]);
    expect(db?.milestones.map((m) => m.name)).to.include.members([
      "postgres:recovered",
      "postgres:serving",
      "postgres:va-gone",
    ]);
  });

  it("the node-local example comes back only after the heal: its replacement waited for its node", function () {
    const local = summary.scenarios.find((s) => s.id === "file/local-volume-partition");
    const at = (name: string) => local?.milestones.find((m) => m.name === name)?.atMs;
    const healed = at("partition-healed");
    const recovered = at("journal:recovered");
    expect(healed, "partition-healed").to.be.a("number");
    expect(recovered, "journal:recovered").to.be.a("number");
    expect(at("journal:pod-deletion-requested"), "evicted during the partition").to.be.below(healed ?? 0);
    expect(recovered).to.be.above(healed ?? Number.POSITIVE_INFINITY);
  });
});

describe("scenario files on the sim: a manifest the API server rejects", function () {
  it("is refused with the API's message before any fault, exit 2, and no sim process is left", async function () {
    const reportDir = join(testRunDir("scenario-files"), "rejected");
    const file = join(PROJECT_ROOT, "test", "fixtures", "scenario-files-run", "rejected.yaml");
    const run = await runOnSimFast(this, reportDir, ["--no-html", "-f", file], 10 * 60_000);
    const text = `${run.stdout}\n${run.stderr}`;
    expect(run.exitCode, text.slice(-4000)).to.equal(2);
    expect(text).to.include("the API server rejects Deployment/web");
    expect(text).to.include("selector");
    const summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
    expect(summary.error?.code).to.equal("INVALID_INPUT");
    expect(summary.scenarios).to.deep.equal([]);
    expect(findProcessesByRunTag(summary.runId)).to.deep.equal([]);
  });
});

describe("scenario files: a kustomize workload", function () {
  it("is built with the sim's kubectl, and its windows come from the built output", async function () {
    allowFor(this, 30 * 60_000);
    const binaries = await ensureSimBinaries();
    const dir = join(PROJECT_ROOT, "test", "fixtures", "scenario-files-run", "kustomize");
    const result = await execa(process.execPath, [REKINDLE_BIN, "list", "--profile", "fast", "-f", dir], {
      reject: false,
      env: { REKINDLE_KUBECTL: binaries.kubectl },
    });
    expect(result.exitCode, result.stderr).to.equal(0);
    // Only the overlay's patch gives the Deployment its 45 s toleration.
    expect(result.stdout).to.include("its unreachable toleration (tolerationSeconds 45)");
  });
});
