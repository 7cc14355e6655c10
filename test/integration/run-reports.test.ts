// `rekindle run` end to end on the sim provider (fast profile): the node-loss suite (but the
// by-hand scenarios) passes, its milestones are all present and causally ordered, and every
// report names every scenario.
import { expect } from "chai";
import { execa } from "execa";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunSummary } from "../../lib/report/summary.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { runOnSimFast } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";
import { summarySchemaErrors } from "../support/summary-schema.js";
import { WATCH_SKEW_MS } from "../../lib/expect/windows.js";

const bin = join(PROJECT_ROOT, "bin", "rekindle.js");
const SCENARIOS = ["node-loss/baseline", "node-loss/manual-out-of-service", "node-loss/controller"];

function at(summary: RunSummary, scenario: string, milestone: string): number {
  const m = summary.scenarios.find((s) => s.id === scenario)?.milestones.find((x) => x.name === milestone);
  expect(m, `${scenario}: milestone ${milestone}`).to.not.equal(undefined);
  return m?.atMs ?? Number.NaN;
}

describe("rekindle run (sim, fast profile) and its reports", function () {
  const reportDir = join(testRunDir("run"), "report");
  let summary: RunSummary;
  let stdout = "";
  let stderr = "";

  before(async function () {
    const run = await runOnSimFast(
      this,
      reportDir,
      [
        "--suite",
        "node-loss",
        // The by-hand scenarios (7 minutes each) have their own test: by-hand.test.ts.
        "--scenario",
        "node-loss/(baseline|manual-out-of-service|controller) ",
      ],
      900_000,
    );
    stdout = run.stdout;
    stderr = run.stderr;
    expect(run.exitCode, `${run.stdout}\n${run.stderr.slice(-3000)}`).to.equal(0);
    summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
  });

  it("writes summary.json to the contract", function () {
    expect(summary).to.include({ provider: "sim", profile: "fast", repeat: 1 });
    expect(summary.runId).to.be.a("string").and.not.empty;
    expect(Date.parse(summary.startedAt)).to.be.a("number").and.not.NaN;
    expect(summary.scenarios.map((s) => s.id)).to.deep.equal(SCENARIOS);
    for (const s of summary.scenarios) {
      expect(s.outcome, s.id).to.equal("passed");
      for (const m of s.milestones) expect(m).to.have.keys("name", "atMs");
      for (const e of s.expected) expect(e).to.have.keys("name", "minMs", "maxMs");
      expect(s.milestones.some((m) => m.name === "fault-injected" && m.atMs === 0)).to.equal(true);
    }
  });

  it("summary.json is schema 2, valid against docs/summary.schema.json, and says what produced it", function () {
    expect(summarySchemaErrors(summary)).to.deep.equal([]);
    expect(summary.schemaVersion).to.equal(2);
    expect(summary.error).to.equal(null);
    const env = summary.environment!;
    expect(env.provider).to.equal("sim");
    expect(env.cluster).to.include("sim cluster");
    // The sim's nodes are processes: no node image, and no in-cluster controller.
    expect(env.nodeImage).to.deep.include({ reference: null, digest: null });
    expect(env.controllerImage).to.equal(null);
    expect(env.kubernetes.apiserver.version).to.match(/^v1\.34\./);
    expect(env.kubernetes.controllerManager.source).to.include("pinned");
    expect(env.kubernetes.nodes.length).to.be.at.least(3);
    expect(env.timing.name).to.equal("fast");
    expect(env.host.cores).to.be.at.least(1);
  });

  it("writes signoff.html and signoff.md carrying summary.json's sha256", function () {
    const sha = createHash("sha256")
      .update(readFileSync(join(reportDir, "summary.json")))
      .digest("hex");
    const html = readFileSync(join(reportDir, "signoff.html"), "utf8");
    const md = readFileSync(join(reportDir, "signoff.md"), "utf8");
    for (const text of [html, md]) {
      expect(text).to.include(sha).and.include("PASSED");
      for (const id of SCENARIOS) expect(text).to.include(id);
    }
    expect(html).to.include("<svg");
  });

  it("records the baseline: Deployment recovered, StatefulSet never, volume never detached", function () {
    const baseline = summary.scenarios.find((s) => s.id === "node-loss/baseline")!;
    expect(baseline.recoveryMs).to.equal(null);
    const names = baseline.milestones.map((m) => m.name);
    expect(names).to.include.members([
      "node-ready-unknown",
      "taint-added:node.kubernetes.io/unreachable",
      "deployment:recovered",
      "statefulset:pod-deletion-requested",
    ]);
    expect(names).to.include("statefulset-plain:pod-deletion-requested");
    // Each on its own: "not include.members" of both would pass with one of them present.
    expect(names).to.not.include("statefulset:pod-gone");
    expect(names).to.not.include("statefulset-plain:pod-gone");
    expect(names).to.not.include("va-gone");
  });

  it("orders the recovery chain causally after a manual out-of-service taint", function () {
    const id = "node-loss/manual-out-of-service";
    const chain = [
      "fault-injected",
      "node-ready-unknown",
      "taint-added:node.kubernetes.io/unreachable",
      "deployment:pod-deletion-requested",
      "deployment:recovered",
      "taint-added:node.kubernetes.io/out-of-service",
      "statefulset:pod-gone",
      "va-gone",
      "va-attached-elsewhere",
      "statefulset:recovered",
    ];
    const times = chain.map((m) => at(summary, id, m));
    // The VolumeAttachment and the pod come on two watches: the detach the pod's deletion caused
    // may be delivered first, by up to WATCH_SKEW_MS (seen once in a gate: 1 ms).
    const slack = (name: string | undefined) => (name === "va-gone" ? WATCH_SKEW_MS : 0);
    for (let i = 1; i < times.length; i++)
      expect(times[i], `${chain[i] ?? ""} after ${chain[i - 1] ?? ""}`).to.be.at.least(
        (times[i - 1] ?? 0) - slack(chain[i]),
      );
    const scenario = summary.scenarios.find((s) => s.id === id)!;
    // Recovery is the last workload back: the StatefulSets (with and without a volume) or the Deployment.
    expect(scenario.recoveryMs).to.equal(
      Math.max(
        at(summary, id, "statefulset:recovered"),
        at(summary, id, "statefulset-plain:recovered"),
        at(summary, id, "deployment:recovered"),
      ),
    );
    expect(at(summary, id, "statefulset-plain:pod-gone")).to.be.at.least(
      at(summary, id, "taint-added:node.kubernetes.io/out-of-service"),
    );
    // The scenario chose PodGC's phase (suites/node-loss.ts): its fault came 14 s after a pass, so
    // the pass that freed the pods is one of those 6 s, 26 s, 46 s… after the fault.
    expect(stderr, "the progress lines").to.include(
      `${id}: observing a PodGC pass to choose the fault's phase`,
    );
    const gone = at(summary, id, "statefulset:pod-gone");
    expect((gone - 6_000) % 20_000, `the StatefulSet pod gone ${gone} ms after the fault`).to.be.below(2_000);
  });

  it("with the recovery controller, every workload is back well within the profile's toleration and a minute", function () {
    const id = "node-loss/controller";
    const scenario = summary.scenarios.find((s) => s.id === id)!;
    expect(scenario.recoveryMs).to.be.a("number").and.below(60_000);
    // Fenced before tainted, tainted before the StatefulSet pod was released.
    expect(at(summary, id, "fence:power-management:done")).to.be.at.most(
      at(summary, id, "taint-added:node.kubernetes.io/out-of-service"),
    );
    expect(at(summary, id, "taint-added:node.kubernetes.io/out-of-service")).to.be.at.most(
      at(summary, id, "statefulset:pod-gone"),
    );
    expect(at(summary, id, "statefulset:pod-gone")).to.be.at.most(at(summary, id, "statefulset:recovered"));
  });

  it("writes junit.xml naming every scenario", function () {
    const xml = readFileSync(join(reportDir, "junit.xml"), "utf8");
    for (const id of SCENARIOS) expect(xml).to.include(`name="${id}"`);
    expect(xml).to.include('failures="0"');
  });

  it("draws one SVG timeline per scenario with every milestone on it", function () {
    for (const s of summary.scenarios) {
      const svg = readFileSync(join(reportDir, "charts", `${s.id.replaceAll("/", "__")}.svg`), "utf8");
      expect(svg.startsWith("<svg")).to.equal(true);
      for (const m of s.milestones) expect(svg, `${s.id} chart: ${m.name}`).to.include(`>${m.name}</text>`);
    }
  });

  it("writes Allure results with a step per scenario step, and the HTML report", function () {
    const results = readdirSync(join(reportDir, "allure-results")).filter((f) => f.endsWith("-result.json"));
    const parsed = results.map(
      (f) =>
        JSON.parse(readFileSync(join(reportDir, "allure-results", f), "utf8")) as {
          name: string;
          status: string;
          steps: { name: string }[];
        },
    );
    for (const id of SCENARIOS) {
      const result = parsed.find((r) => r.name.startsWith(id));
      expect(result, id).to.not.equal(undefined);
      expect(result?.status).to.equal("passed");
      // Every mode records, awaits the Deployment and attaches its timeline.
      expect(result?.steps.map((s) => s.name)).to.include.members([
        "start the timeline recorder",
        "await deployment:recovered",
        "timeline.svg",
      ]);
    }
    expect(existsSync(join(reportDir, "allure-report", "index.html"))).to.equal(true);
  });

  it("prints a PASS line per scenario, saying what it measured", function () {
    for (const id of SCENARIOS) expect(stdout).to.include(`PASS  ${id}`);
    expect(stdout).to.match(/PASS {2}node-loss\/controller {2}\(recovered in \d+\.\ds\)/);
    expect(stdout.trimEnd().split("\n").at(-1)).to.equal(`scenarios: ${SCENARIOS.length} passed, 0 failed`);
  });

  it("rekindle compare: no regression against itself, a regression against a slower copy", async function () {
    const path = join(reportDir, "summary.json");
    const same = await execa(process.execPath, [bin, "compare", path, path], { reject: false });
    expect(same.exitCode, same.stdout).to.equal(0);
    expect(same.stdout).to.include("no regression");
    const slower = structuredClone(summary);
    for (const s of slower.scenarios) {
      if (s.recoveryMs !== null) s.recoveryMs *= 1.5;
      for (const m of s.milestones) m.atMs *= 1.5;
    }
    const slowerPath = join(reportDir, "slower-summary.json");
    writeFileSync(slowerPath, JSON.stringify(slower));
    const worse = await execa(
      process.execPath,
      [bin, "compare", path, slowerPath, "--max-regression", "20%"],
      { reject: false },
    );
    expect(worse.exitCode, worse.stdout).to.equal(1);
    expect(worse.stdout).to.include("REGRESSION").and.include("recovery");
  });
});
