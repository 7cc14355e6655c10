// A run whose harness breaks: exit 3, and every report still written (summary.json with a run-level
// error and valid against docs/summary.schema.json, junit.xml with an <error>, the sign-off files).
// Driven cheaply: the existing provider with a kubeconfig whose API server port nothing listens on.
import { expect } from "chai";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exitCodeForError } from "../../lib/cli/exit-codes.js";
import { RekindleError, type RekindleErrorCode } from "../../lib/errors.js";
import type { RunSummary } from "../../lib/report/summary.js";
import { harnessFailure, runErrorOf } from "../../lib/run/run-reports.js";
import { runConformance } from "../../lib/run/runner.js";
import { planRun } from "../../lib/run/run-plan.js";
import { silentProgress } from "../../lib/util/progress.js";
import { freeLoopbackPorts } from "../../lib/util/ports.js";
import { list, startFakeApiServer, type FakeApiServer } from "../support/fake-apiserver.js";
import { captureStderr } from "../support/assertions.js";
import { summarySchemaErrors } from "../support/summary-schema.js";
import { cli, expectExit } from "../support/cli-capture.js";
import { withoutStepSummary } from "../support/step-summary.js";

async function closedPortKubeconfig(dir: string): Promise<string> {
  const [port = 0] = await freeLoopbackPorts(1);
  const path = join(dir, "kubeconfig");
  writeFileSync(
    path,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{ name: gone, cluster: { server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true } }]`,
      "users: [{ name: gone, user: { token: t } }]",
      "contexts: [{ name: gone, context: { cluster: gone, user: gone } }]",
      "current-context: gone",
      "",
    ].join("\n"),
  );
  return path;
}

describe("exit codes", function () {
  const cases: [RekindleErrorCode, number][] = [
    ["INVALID_INPUT", 2],
    ["ABORTED", 130],
    ["HARNESS_FAILED", 3],
    ["BOOT_FAILED", 3],
    ["UNREACHABLE", 3],
    ["TOOLCHAIN", 3],
    ["BUILD_FAILED", 3],
    ["TIMELINE_MISMATCH", 1],
    ["PRECONDITION", 1],
    ["NOT_FOUND", 1],
  ];
  for (const [code, exit] of cases) {
    it(`${code} exits ${exit}`, function () {
      expect(exitCodeForError(new RekindleError(code, "x"))).to.equal(exit);
    });
  }
  it("anything not a RekindleError exits 1", function () {
    expect(exitCodeForError(new Error("boom"))).to.equal(1);
  });
});

describe("rekindle run when the cluster never comes up", function () {
  this.timeout(60_000);
  withoutStepSummary();
  const dir = mkdtempSync(join(tmpdir(), "rekindle-harness-fail-"));
  const reportDir = join(dir, "report");
  let result: { code: number; stdout: string; stderr: string };
  let summary: RunSummary;
  let kubeconfig: string;

  before(async function () {
    kubeconfig = await closedPortKubeconfig(dir);
    result = await cli([
      "run",
      "--provider",
      "existing",
      "--kubeconfig",
      kubeconfig,
      "--report-dir",
      reportDir,
      "--no-html",
    ]);
    summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
  });

  it("exits 3 (the harness broke), not 1 (a scenario failed), naming what broke", function () {
    expect(result.code, result.stderr).to.equal(3);
    expect(result.stderr).to.include("error [HARNESS_FAILED]").and.include("cannot reach the cluster");
    expect(result.stdout).to.include("HARNESS FAILED during cluster-boot: UNREACHABLE");
    expect(result.stdout.trimEnd().split("\n").at(-1)).to.equal("scenarios: 0 passed, 0 failed");
  });

  it("writes summary.json with the run-level error, valid against docs/summary.schema.json", function () {
    expect(summarySchemaErrors(summary)).to.deep.equal([]);
    expect(summary.schemaVersion).to.equal(2);
    expect(summary.error).to.deep.include({ code: "UNREACHABLE", phase: "cluster-boot" });
    expect(summary.error?.message).to.include("cannot reach the cluster");
    expect(summary.scenarios).to.deep.equal([]);
    const env = summary.environment;
    expect(env?.provider).to.equal("existing");
    expect(env?.cluster).to.equal(null);
    expect(env?.kubernetes.apiserver).to.deep.equal({ version: null, source: "no cluster came up" });
    expect(env?.nodeImage).to.deep.equal({ reference: null, digest: null, source: "no cluster came up" });
    expect(env?.timing.name).to.equal("default");
    expect(env?.timing.nodeLeaseDurationSeconds).to.equal(40);
    expect(env?.host.nodejs).to.equal(process.version);
  });

  it("writes junit.xml with an <error>, not a <failure>", function () {
    const xml = readFileSync(join(reportDir, "junit.xml"), "utf8");
    expect(xml).to.include('errors="1"').and.include('failures="0"');
    expect(xml).to.match(
      /<testcase [^>]*name="rekindle\/harness"[^>]*>\s*<error type="UNREACHABLE" message="UNREACHABLE during cluster-boot: cannot reach/,
    );
    expect(xml).to.not.include("<failure");
  });

  it("writes the sign-off files, saying the harness broke", function () {
    for (const file of ["signoff.html", "signoff.md"]) {
      const text = readFileSync(join(reportDir, file), "utf8");
      expect(text, file).to.include("HARNESS FAILED").and.include("cannot reach the cluster");
    }
  });

  it("-o json prints {reportDir, summary} on stdout and still exits 3", async function () {
    const again = join(dir, "report-json");
    const json = await cli([
      "run",
      "--provider",
      "existing",
      "--kubeconfig",
      join(dir, "kubeconfig"),
      "--report-dir",
      again,
      "--no-html",
      "-o",
      "json",
    ]);
    expect(json.code).to.equal(3);
    const parsed = JSON.parse(json.stdout) as { reportDir: string; summary: RunSummary };
    expect(parsed.reportDir).to.equal(again);
    expect(parsed.summary.error?.code).to.equal("UNREACHABLE");
    expect(parsed.summary).to.deep.equal(JSON.parse(readFileSync(join(again, "summary.json"), "utf8")));
  });

  /** `rekindle run <flags>` into the report directory `name` exits 2 saying `says`, and writes none. */
  async function refusedBeforeReport(name: string, flags: string[], ...says: string[]): Promise<void> {
    const reportDir = join(dir, name);
    expectExit(await cli(["run", ...flags, "--report-dir", reportDir]), 2, ...says);
    expect(existsSync(reportDir)).to.equal(false);
  }

  it("a bad -o value exits 2 before anything starts", async function () {
    await refusedBeforeReport("never", ["--provider", "sim", "-o", "yaml"], '"yaml"', "text, json");
  });

  it("a kubeconfig or context that is not there exits 2 before any report directory exists", async function () {
    const existing = ["--provider", "existing", "--kubeconfig"];
    await refusedBeforeReport("no-file", [...existing, "/nope"], "kubeconfig /nope does not exist");
    await refusedBeforeReport(
      "no-context",
      [...existing, kubeconfig, "--context", "nope"],
      'unknown context "nope"',
    );
  });
});

describe("how a broken run is reported", function () {
  const body = new RekindleError("UNREACHABLE", "the API server went away", { hint: "is it up?" });

  it("names the phase, keeps the cause's code and hint, and exits 3", function () {
    expect(runErrorOf(body, "suites")).to.deep.equal({
      code: "UNREACHABLE",
      message: "the API server went away",
      phase: "suites",
      hint: "is it up?",
    });
    const error = harnessFailure(body, "suites", "/r");
    expect(error.code).to.equal("HARNESS_FAILED");
    expect(error.message).to.equal("the harness failed while running the suites: the API server went away");
    expect(exitCodeForError(error)).to.equal(3);
  });

  it("reports what the suites threw, not the teardown error that followed it", function () {
    const both = Object.assign(new Error("teardown failed too"), {
      name: "SuppressedError",
      suppressed: body,
    });
    expect(runErrorOf(both, "suites").message).to.equal("the API server went away");
  });

  it("an error of another kind is INTERNAL in the summary, still exit 3", function () {
    expect(runErrorOf(new TypeError("x is undefined"), "teardown")).to.deep.equal({
      code: "INTERNAL",
      message: "x is undefined",
      phase: "teardown",
    });
    expect(exitCodeForError(harnessFailure(new TypeError("x"), "teardown", "/r"))).to.equal(3);
  });

  it("input found wrong only on opening the cluster stays bad input (exit 2)", function () {
    const input = RekindleError.invalidInput("context", "nope", ["a", "b"]);
    expect(harnessFailure(input, "cluster-boot", "/r")).to.equal(input);
  });
});

describe("rekindle run when a scenario fails (existing provider, a stand-in API server)", function () {
  this.timeout(60_000);
  withoutStepSummary();
  const dir = mkdtempSync(join(tmpdir(), "rekindle-scenario-fail-"));
  let api: FakeApiServer;
  let result: { code: number; stdout: string; stderr: string };
  let summary: RunSummary;

  before(async function () {
    // Enough for the cluster to open and say its versions; the scenario's first write gets a 404.
    api = await startFakeApiServer({
      "GET /version": () => ({ body: { gitVersion: "v1.34.0" } }),
      "GET /api/v1/nodes": () =>
        list("NodeList", [{ metadata: { name: "w1" }, status: { nodeInfo: { kubeletVersion: "v1.34.0" } } }]),
    });
    result = await cli([
      "run",
      "--provider",
      "existing",
      "--kubeconfig",
      api.kubeconfigPath,
      "--suite",
      "preflight",
      "--report-dir",
      join(dir, "report"),
      "--no-html",
      "-o",
      "json",
    ]);
    summary = JSON.parse(readFileSync(join(dir, "report", "summary.json"), "utf8")) as RunSummary;
  });

  after(async function () {
    await api.close();
  });

  it("exits 1 (a scenario failed), with no run-level error", function () {
    expect(result.code, result.stderr).to.equal(1);
    expect(summary.error).to.equal(null);
    expect(summary.scenarios.map((s) => [s.id, s.outcome])).to.deep.equal([
      ["preflight/node-heartbeats", "failed"],
    ]);
  });

  it("-o json keeps stdout to the JSON: the test lines go to stderr", function () {
    const parsed = JSON.parse(result.stdout) as { summary: RunSummary };
    expect(parsed.summary).to.deep.equal(summary);
    expect(result.stderr).to.include("preflight/node-heartbeats");
  });

  it("the summary is valid and says which Kubernetes the cluster reported", function () {
    expect(summarySchemaErrors(summary)).to.deep.equal([]);
    expect(summary.environment?.kubernetes.apiserver.version).to.equal("v1.34.0");
    expect(summary.environment?.kubernetes.kubelet.version).to.equal("v1.34.0");
    expect(summary.environment?.cluster).to.include("existing cluster");
  });

  it("junit.xml has the scenario's <failure>, no <error>; the sign-off says FAILED and draws its chart", function () {
    const xml = readFileSync(join(dir, "report", "junit.xml"), "utf8");
    expect(xml).to.include('failures="1"').and.include('errors="0"').and.include("<failure");
    expect(xml).to.not.include("<error");
    const html = readFileSync(join(dir, "report", "signoff.html"), "utf8");
    expect(html)
      .to.include("<strong>FAILED</strong>")
      .and.include("<svg")
      .and.include("heartbeats:all-workers");
    expect(readFileSync(join(dir, "report", "signoff.md"), "utf8")).to.include(
      "| preflight/node-heartbeats | FAIL |",
    );
  });
});

describe("rekindle run when interrupted", function () {
  this.timeout(60_000);
  withoutStepSummary();

  it("still writes its reports, which say it was interrupted and where, and ends ABORTED (exit 130)", async function () {
    const api = await startFakeApiServer({
      "GET /api/v1/nodes": () => list("NodeList", []),
    });
    const reportDir = join(mkdtempSync(join(tmpdir(), "rekindle-interrupted-")), "report");
    const controller = new AbortController();
    controller.abort(new Error("Ctrl-C"));
    try {
      // Its test lines go to stderr, captured here to keep this test's output clean.
      const plan = await planRun(
        {
          provider: "existing",
          kubeconfig: api.kubeconfigPath,
          suite: ["preflight"],
          "report-dir": reportDir,
          "no-html": true,
        },
        { progress: silentProgress, testLog: "stderr" },
      );
      const { error } = await captureStderr(() =>
        runConformance(plan, { progress: silentProgress, signal: controller.signal }),
      );
      expect(error).to.be.instanceOf(RekindleError);
      expect(exitCodeForError(error)).to.equal(130);
      const summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
      expect(summarySchemaErrors(summary)).to.deep.equal([]);
      expect(summary.error).to.deep.include({ code: "ABORTED", phase: "cluster-boot" });
      expect(readFileSync(join(reportDir, "junit.xml"), "utf8")).to.include('<error type="ABORTED"');
      expect(readFileSync(join(reportDir, "signoff.md"), "utf8"))
        .to.include("**INTERRUPTED**")
        .and.include("the run was stopped during cluster-boot (ABORTED): rekindle run was interrupted");
    } finally {
      await api.close();
    }
  });
});
