// -o json on every command that reports a result (JSON alone on stdout), and the global -q/-v:
// how much progress a command shows, through the Progress level.
import { expect } from "chai";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { globalFlags } from "../../lib/cli/global-flags.js";
import { consoleProgress, progressLevel, setProgressLevel } from "../../lib/util/progress.js";
import { cli } from "../support/cli-capture.js";
import { list, startFakeApiServer, type FakeApiServer } from "../support/fake-apiserver.js";
import { runSummary, scenario, scenarioRun, window, writeSummaries } from "../support/summaries.js";

const READY = "deployment:recovered";

/** The flags of a verb on the existing provider (`api`'s kubeconfig), with its JSON output. */
function existingJson(api: FakeApiServer): string[] {
  return ["--provider", "existing", "--kubeconfig", api.kubeconfigPath, "-o", "json"];
}

/** A stand-in cluster with one Ready worker and an empty fault journal. */
async function emptyCluster(): Promise<FakeApiServer> {
  const node = {
    metadata: { name: "w1", labels: {} },
    status: { conditions: [{ type: "Ready", status: "True" }] },
  };
  return startFakeApiServer({
    "GET /api/v1/nodes": () => list("NodeList", [node]),
    "GET /api/v1/namespaces/rekindle-journal/configmaps": () => list("ConfigMapList", []),
    // rekindle's node agent, installed (node verbs on an existing cluster go through it).
    "GET /apis/apps/v1/namespaces/rekindle-agent/daemonsets/rekindle-agent": () => ({
      body: {
        kind: "DaemonSet",
        apiVersion: "apps/v1",
        metadata: { name: "rekindle-agent", namespace: "rekindle-agent" },
        spec: { selector: {}, template: {} },
        status: {
          desiredNumberScheduled: 1,
          currentNumberScheduled: 1,
          numberMisscheduled: 0,
          numberReady: 1,
        },
      },
    }),
  });
}

describe("CLI -o json on every command that reports a result", function () {
  this.timeout(60_000);

  it("up, down, node, reap, trend, sim up and sim down take -o and refuse a format other than text or json", async function () {
    for (const argv of [
      ["up", "--provider", "sim", "-o", "yaml"],
      ["down", "--provider", "kind", "-o", "yaml"],
      ["node", "stop", "w1", "--provider", "sim", "-o", "yaml"],
      ["reap", "-o", "yaml"],
      ["trend", "x/summary.json", "-o", "yaml"],
      ["sim", "up", "-o", "yaml"],
      ["sim", "down", "--name", "no-such-cluster-here", "-o", "yaml"],
      ["sim", "build", "--check", "-o", "yaml"],
      ["sim", "node", "stop", "worker-1", "-o", "yaml"],
      ["sim", "node", "reregister", "worker-1", "-o", "yaml"],
      ["agent", "install", "-o", "yaml"],
      ["agent", "uninstall", "-o", "yaml"],
      ["kind", "build-image", "-o", "yaml"],
      ["kind", "build-controller-image", "--check", "-o", "yaml"],
    ]) {
      const { code, stdout, stderr } = await cli(argv);
      expect(code, argv.join(" ")).to.equal(2);
      expect(stdout).to.equal("");
      expect(stderr, argv.join(" ")).to.include('"yaml"; valid: text, json');
    }
    for (const path of [
      ["up"],
      ["down"],
      ["node"],
      ["reap"],
      ["trend"],
      ["sim", "up"],
      ["sim", "down"],
      ["sim", "build"],
      ["sim", "node"],
      ["agent", "install"],
      ["agent", "uninstall"],
      ["kind", "build-image"],
      ["kind", "build-controller-image"],
    ]) {
      const { stdout } = await cli([...path, "--help"]);
      expect(stdout, path.join(" ")).to.include("[-o text|json]");
    }
  });

  it("sim build --check -o json: each pinned component and whether it is cached, as JSON alone", async function () {
    const { code, stdout } = await cli(["sim", "build", "--check", "-o", "json"]);
    const parsed = JSON.parse(stdout) as { components: { component: string; cached: boolean }[] };
    expect(parsed.components.map((c) => c.component)).to.include.members(["kubernetes", "etcd", "kwok"]);
    expect(code).to.equal(parsed.components.every((c) => c.cached) ? 0 : 1);
  });

  it("trend -o json: the page written, its runs and scenarios, and nothing else on stdout", async function () {
    const [a = "", b = ""] = writeSummaries([
      runSummary([scenario("node-loss/x", [scenarioRun({ [READY]: 20_000 }, 20_000)], [window(READY)])]),
      runSummary([scenario("node-loss/x", [scenarioRun({ [READY]: 21_000 }, 21_000)], [window(READY)])], {
        runId: "20260102-000000-bbbbbb",
        startedAt: "2026-01-02T00:00:00.000Z",
      }),
    ]);
    const out = join(mkdtempSync(join(tmpdir(), "rekindle-trend-")), "trend.html");
    const { code, stdout } = await cli(["trend", a, b, "--out", out, "-o", "json"]);
    expect(code).to.equal(0);
    const parsed = JSON.parse(stdout) as {
      out: string;
      provider: string;
      runs: { runId: string }[];
      scenarios: { id: string; outcomes: (string | null)[] }[];
      warnings: string[];
    };
    expect(parsed.out).to.equal(out);
    expect(parsed.provider).to.equal("kind");
    expect(parsed.runs.map((r) => r.runId)).to.deep.equal([
      "20260101-000000-aaaaaa",
      "20260102-000000-bbbbbb",
    ]);
    expect(parsed.scenarios.map((s) => s.id)).to.deep.equal(["node-loss/x"]);
    expect(parsed.warnings).to.deep.equal([]);
  });

  it("reap and down (existing) -o json: what the journal held, as JSON alone on stdout", async function () {
    const api = await emptyCluster();
    try {
      const reap = await cli(["reap", "--kubeconfig", api.kubeconfigPath, "-o", "json"]);
      expect(reap.code).to.equal(0);
      expect(JSON.parse(reap.stdout)).to.deep.equal({ faults: [], unreadable: [], deletedNamespaces: [] });
      const down = await cli(["down", ...existingJson(api)]);
      expect(down.code).to.equal(0);
      const parsed = JSON.parse(down.stdout) as {
        provider: string;
        faults: unknown[];
        unreadable: unknown[];
      };
      expect(parsed).to.include({ provider: "existing" });
      expect(parsed.faults).to.deep.equal([]);
      expect(down.stderr).to.include("stays up");
    } finally {
      await api.close();
    }
  });

  it("node start -o json: what it ended and left, as JSON alone on stdout", async function () {
    const api = await emptyCluster();
    try {
      const { code, stdout, stderr } = await cli(["node", "start", "w1", ...existingJson(api)]);
      expect(code, stderr).to.equal(0);
      expect(JSON.parse(stdout)).to.deep.equal({
        verb: "start",
        node: "w1",
        ended: [],
        left: [],
        direct: false,
      });
      expect(stderr).to.include("no journalled stop or graceful-shutdown fault to end");
    } finally {
      await api.close();
    }
  });
});

describe("CLI -q and -v", function () {
  this.timeout(60_000);

  it("are taken anywhere before --, the last one winning, and left out of the command's arguments", function () {
    expect(globalFlags(["-q", "run", "--suite", "x"])).to.deep.equal({
      level: "quiet",
      rest: ["run", "--suite", "x"],
    });
    expect(globalFlags(["run", "--verbose"])).to.deep.equal({ level: "verbose", rest: ["run"] });
    expect(globalFlags(["run", "-v", "--quiet"]).level).to.equal("quiet");
    expect(globalFlags(["run", "--", "-q"])).to.deep.equal({ level: undefined, rest: ["run", "--", "-q"] });
  });

  it("a console progress shows nothing when quiet, its lines when normal, and details too when verbose", function () {
    const shown = (level: "quiet" | "normal" | "verbose"): string => {
      const stream = new PassThrough();
      const progress = consoleProgress(stream, { level });
      progress.info("status");
      progress.detail?.("detail");
      progress.phase("phase").end();
      return String(stream.read() ?? "");
    };
    expect(shown("quiet")).to.equal("");
    expect(shown("normal")).to.include("status").and.include("phase").and.not.include("detail");
    expect(shown("verbose")).to.include("status").and.include("detail").and.include("phase");
  });

  it("the level set for a command is restored after it", async function () {
    const before = progressLevel();
    await cli(["-q", "version"]);
    expect(progressLevel()).to.equal(before);
    const restore = setProgressLevel("verbose");
    expect(progressLevel()).to.equal("verbose");
    restore();
    expect(progressLevel()).to.equal(before);
  });

  it("run -q: the result lines and the error, no progress", async function () {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-quiet-run-"));
    // A cluster that does not answer: the run breaks at once, its reports written (exit 3).
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        'clusters: [{ name: gone, cluster: { server: "http://127.0.0.1:1", insecure-skip-tls-verify: true } }]',
        "users: [{ name: gone, user: { token: t } }]",
        "contexts: [{ name: gone, context: { cluster: gone, user: gone } }]",
        "current-context: gone",
        "",
      ].join("\n"),
    );
    const argv = ["run", "--provider", "existing", "--kubeconfig", kubeconfig, "--no-html"];
    const normal = await cli([...argv, "--report-dir", join(dir, "normal")]);
    const quiet = await cli(["-q", ...argv, "--report-dir", join(dir, "quiet")]);
    expect(normal.code).to.equal(3);
    expect(quiet.code).to.equal(3);
    expect(normal.stderr).to.include("[rekindle +");
    expect(quiet.stderr).to.include("error [HARNESS_FAILED]");
    expect(quiet.stderr).to.not.include("[rekindle +");
    expect(quiet.stdout.trimEnd().split("\n").at(-1)).to.equal("scenarios: 0 passed, 0 failed");
  });

  it("-q leaves errors and the result only; -v adds the details (which cluster, which provider)", async function () {
    const api = await emptyCluster();
    try {
      const argv = ["down", "--provider", "existing", "--kubeconfig", api.kubeconfigPath];
      const normal = await cli(argv);
      const quiet = await cli(["-q", ...argv]);
      const verbose = await cli([...argv, "-v"]);
      for (const result of [normal, quiet, verbose]) {
        expect(result.code).to.equal(0);
        expect(result.stdout).to.equal(normal.stdout);
      }
      expect(normal.stderr)
        .to.include("[rekindle +")
        .and.include("stays up")
        .and.not.include("cluster: the existing one");
      expect(quiet.stderr).to.equal("");
      expect(verbose.stderr)
        .to.include("provider: existing (--provider)")
        .and.include("cluster: the existing one");
      const bad = await cli(["-q", "run", "--bogus"]);
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.include("unknown option '--bogus'");
    } finally {
      await api.close();
    }
  });
});
