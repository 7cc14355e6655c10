// summary.json schema 2 as the real writing code produces it (valid against the published schema),
// the cluster versions it reads, what each end-of-run line says a scenario measured, and the
// sign-off renderers: content, escaping, and the sha256 of the summary.json next to them.
import { expect } from "chai";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ContainerRuntimeClient } from "testcontainers";
import { KindNodes } from "../../lib/cluster/kind/nodes.js";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { PINNED_SIM_VERSIONS } from "../../lib/build/versions.js";
import { runResultText } from "../../lib/cli/run-result.js";
import { timelineSvg } from "../../lib/report/chart.js";
import { clusterVersions } from "../../lib/report/cluster-versions.js";
import { runEnvironment } from "../../lib/report/environment.js";
import { scenarioFigure } from "../../lib/report/scenario-figure.js";
import { writeSignoff } from "../../lib/report/signoff.js";
import {
  summarizeScenario,
  SUMMARY_SCHEMA_VERSION,
  writeSummary,
  type RunSummary,
  type ScenarioRun,
  type SummaryExpected,
} from "../../lib/report/summary.js";
import { list, startFakeApiServer } from "../support/fake-apiserver.js";
import { summarySchemaErrors } from "../support/summary-schema.js";

const passedRun = (milestones: [string, number][], recoveryMs: number | null): ScenarioRun => ({
  outcome: "passed",
  recoveryMs,
  milestones: milestones.map(([name, atMs]) => ({ name, atMs })),
});

const window = (name: string, minMs: number, maxMs: number | null): SummaryExpected => ({
  name,
  minMs,
  maxMs,
});

/** Scenarios shaped like a real run's: a recovery, a baseline that never fully recovers, a safety one, a preflight. */
function scenarios() {
  const controller = summarizeScenario(
    "node-loss/controller",
    [
      passedRun(
        [
          ["fault-injected", 0],
          ["fence:power-management:done", 7_100],
          ["deployment:recovered", 9_000],
          ["statefulset:recovered", 14_200],
        ],
        14_200,
      ),
    ],
    [
      window("fence:power-management:done", 6_000, 12_000),
      window("deployment:recovered", 2_000, 20_000),
      window("statefulset:recovered", 1_000, 36_000),
    ],
  );
  const baseline = summarizeScenario(
    "node-loss/baseline",
    [
      {
        ...passedRun(
          [
            ["fault-injected", 0],
            ["deployment:recovered", 30_100],
          ],
          null,
        ),
        outcome: "failed",
        error: "late: <b>deployment</b> | & more",
      },
    ],
    [window("deployment:recovered", 7_000, 25_000), window("statefulset:pod-gone", 0, null)],
  );
  const safety = summarizeScenario(
    "safety/powered-on-before-taint",
    [
      passedRun(
        [
          ["fault-injected", 0],
          ["fence:power-management:running", 6_500],
        ],
        null,
      ),
    ],
    [
      window("fence:power-management:running", 6_000, 9_000),
      window("unsafe:left-behind", 0, null),
      window("power-off:2", 0, null),
    ],
  );
  const preflight = summarizeScenario("preflight/node-heartbeats", [passedRun([], null)], []);
  return { controller, baseline, safety, preflight };
}

async function realSummary(): Promise<RunSummary> {
  const s = scenarios();
  return {
    schemaVersion: SUMMARY_SCHEMA_VERSION,
    runId: "20260101-000000-abcdef",
    provider: "kind",
    profile: "fast",
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: "2026-01-01T00:10:00.000Z",
    repeat: 1,
    scenarios: [s.controller, s.baseline, s.safety, s.preflight],
    skipped: [{ id: "node-pressure/disk", reason: "needs <a> pressure | capability" }],
    environment: await runEnvironment({
      provider: "kind",
      timing: TIMING_PROFILES.fast,
      cluster: "kind cluster rekindle",
      images: {
        nodeImage: { reference: "kindest/node:v1.34.0", digest: "sha256:aaaa" },
        controllerImage: { reference: "rekindle/controller:dev", digest: null },
      },
    }),
    error: null,
  };
}

describe("summary.json schema 2", function () {
  // runEnvironment asks git for the commit and the tree's state: give a loaded machine room.
  this.timeout(30_000);
  it("a summary made by the real writing code validates against docs/summary.schema.json", async function () {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-summary-"));
    const written = JSON.parse(readFileSync(writeSummary(dir, await realSummary()), "utf8")) as RunSummary;
    expect(summarySchemaErrors(written)).to.deep.equal([]);
    expect(written.environment?.rekindle.version).to.equal(
      (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version,
    );
    expect(written.environment?.nodeImage).to.deep.include({
      reference: "kindest/node:v1.34.0",
      digest: "sha256:aaaa",
    });
    expect(written.environment?.controllerImage).to.deep.include({
      reference: "rekindle/controller:dev",
      digest: null,
    });
    expect(written.environment?.timing).to.deep.equal(TIMING_PROFILES.fast);
  });

  it("the schema refuses what breaks the contract", async function () {
    const summary = await realSummary();
    expect(summarySchemaErrors({ ...summary, schemaVersion: 1 })).to.not.deep.equal([]);
    const { environment: _environment, ...withoutEnvironment } = summary;
    expect(summarySchemaErrors(withoutEnvironment).join("\n")).to.include("environment");
    expect(
      summarySchemaErrors({ ...summary, error: { code: "X", message: "m", phase: "lunch" } }),
    ).to.not.deep.equal([]);
  });
});

describe("cluster versions as the cluster reports them", function () {
  it("reads /version, each node's nodeInfo and the control-plane pods' image tags; null where absent, with the source", async function () {
    const api = await startFakeApiServer({
      "GET /version": () => ({ body: { gitVersion: "v1.34.0", major: "1", minor: "34" } }),
      "GET /api/v1/nodes": () =>
        list("NodeList", [
          {
            metadata: { name: "w2" },
            status: { nodeInfo: { kubeletVersion: "v1.34.0", kubeProxyVersion: "", osImage: "Debian" } },
          },
          {
            metadata: { name: "w1" },
            status: { nodeInfo: { kubeletVersion: "v1.33.1", kubeProxyVersion: "v1.33.1" } },
          },
        ]),
      "GET /api/v1/namespaces/kube-system/pods": (req) =>
        (req.url ?? "").includes("kube-controller-manager")
          ? list("PodList", [
              {
                metadata: { name: "kcm" },
                spec: {
                  containers: [{ name: "c", image: "registry.k8s.io/kube-controller-manager:v1.34.0" }],
                },
              },
            ])
          : list("PodList", []),
    });
    try {
      const v = await clusterVersions(api.kc, "kind");
      expect(v.apiserver).to.deep.equal({
        version: "v1.34.0",
        source: "kube-apiserver /version (gitVersion)",
      });
      expect(v.kubelet.version).to.equal("v1.33.1, v1.34.0");
      expect(v.kubeProxy.version).to.equal("v1.33.1");
      expect(v.nodes.map((n) => n.name)).to.deep.equal(["w1", "w2"]);
      expect(v.nodes[1]).to.deep.include({ kubeProxyVersion: null, osImage: "Debian", kernelVersion: null });
      expect(v.controllerManager.version).to.equal("v1.34.0");
      expect(v.controllerManager.source).to.include("kube-controller-manager pod");
      expect(v.scheduler.version).to.equal(null);
      expect(v.scheduler.source).to.include("no such pod");
      const sim = await clusterVersions(api.kc, "sim");
      expect(sim.scheduler.version).to.equal(PINNED_SIM_VERSIONS.kubernetes);
      expect(sim.scheduler.source).to.include("pinned");
      expect(sim.kubelet.source).to.include("KWOK");
    } finally {
      await api.close();
    }
  });
});

describe("kind's images as the container engine knows them", function () {
  it("the node image is the control-plane container's, with its image ID; a missing image has no ID", async function () {
    const filters: unknown[] = [];
    const engine = {
      container: {
        dockerode: {
          listContainers: (options: { filters: unknown }) => {
            filters.push(options.filters);
            return Promise.resolve([{ Image: "rekindle/kind-node:v1.34.4", ImageID: "sha256:cafe" }]);
          },
          getImage: (reference: string) => ({
            inspect: () =>
              reference === "rekindle/controller:dev"
                ? Promise.resolve({ Id: "sha256:beef" })
                : Promise.reject(new Error("no such image")),
          }),
        },
      },
    } as unknown as ContainerRuntimeClient;
    const nodes = new KindNodes("rk", () => Promise.resolve(engine));
    expect(await nodes.nodeImage()).to.deep.equal({
      reference: "rekindle/kind-node:v1.34.4",
      digest: "sha256:cafe",
    });
    expect(filters[0]).to.deep.equal({
      label: ["io.x-k8s.kind.cluster=rk", "io.x-k8s.kind.role=control-plane"],
    });
    expect(await nodes.imageId("rekindle/controller:dev")).to.equal("sha256:beef");
    expect(await nodes.imageId("gone:latest")).to.equal(null);
  });
});

describe("what each end-of-run line says a scenario measured", function () {
  const s = scenarios();
  it("a scenario that expects recovery: its recovery time, or what came back of it", function () {
    expect(scenarioFigure(s.controller)).to.equal("recovered in 14.2s");
    expect(scenarioFigure(s.baseline)).to.equal(
      "deployment:recovered at 30.1s; 1 of 1 forbidden milestones absent",
    );
    // A scenario that tracks no recovery time (recoveryOf: []) but expects workloads back by a deadline.
    const tracked = summarizeScenario(
      "safety/daemonset-and-finalizer",
      [
        passedRun(
          [
            ["fault-injected", 0],
            ["deployment:recovered", 9_000],
            ["statefulset:recovered", 15_000],
          ],
          null,
        ),
      ],
      [
        window("deployment:recovered", 2_000, 20_000),
        window("statefulset:recovered", 1_000, 36_000),
        window("statefulset-plain:recovered", 1_000, 29_000),
      ],
    );
    expect(scenarioFigure(tracked)).to.equal(
      "not recovered: statefulset-plain:recovered missing; deployment:recovered at 9.0s; statefulset:recovered at 15.0s",
    );
    tracked.milestones.push({ name: "statefulset-plain:recovered", atMs: 12_000 });
    expect(scenarioFigure(tracked)).to.equal(
      "3 expected recoveries, the last statefulset:recovered at 15.0s",
    );
  });
  it("one that expects none: no 'not recovered', but its key milestone and the forbidden ones absent", function () {
    expect(scenarioFigure(s.safety)).to.equal(
      "no recovery expected; key milestone fence:power-management:running at 6.5s; 2 of 2 forbidden milestones absent",
    );
    expect(scenarioFigure(s.preflight)).to.equal("no recovery expected");
  });
  it("the lines end with the counts", async function () {
    this.timeout(30_000);
    const text = runResultText({ summary: await realSummary(), reportDir: "/r", failed: 1 });
    expect(text).to.include("PASS  safety/powered-on-before-taint  (no recovery expected;");
    expect(text).to.include("FAIL  node-loss/baseline  (deployment:recovered at 30.1s; 1 of 1 forbidden");
    expect(text).to.not.match(/preflight.*not recovered/);
    // Its summary skipped one scenario: counted after the failures (CI reads this line).
    expect(text.trimEnd().split("\n").at(-1)).to.equal("scenarios: 3 passed, 1 failed, 1 skipped");
  });
});

describe("sign-off files", function () {
  this.timeout(30_000);
  let dir: string;
  let summary: RunSummary;
  let html: string;
  let md: string;
  let stepSummary: string;
  let summarySha: string;

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), "rekindle-signoff-"));
    summary = await realSummary();
    writeSummary(dir, summary);
    summarySha = createHash("sha256")
      .update(readFileSync(join(dir, "summary.json")))
      .digest("hex");
    const c = summary.scenarios[0]!;
    const chart = timelineSvg({
      title: c.id,
      subtitle: "kind, fast",
      milestones: c.milestones,
      checks: c.expected.map((e) => ({
        name: e.name,
        after: "fault-injected",
        minMs: e.minMs,
        maxMs: e.maxMs,
        actualMs: c.milestones.find((m) => m.name === e.name)?.atMs,
        verdict: "ok" as const,
        why: "",
      })),
    });
    stepSummary = join(dir, "step-summary.md");
    writeFileSync(stepSummary, "earlier step\n");
    const written = writeSignoff(dir, summary, new Map([[c.id, chart]]), {
      GITHUB_STEP_SUMMARY: stepSummary,
    });
    expect(written.stepSummary).to.equal(stepSummary);
    html = readFileSync(join(dir, "signoff.html"), "utf8");
    md = readFileSync(join(dir, "signoff.md"), "utf8");
  });

  it("both carry the sha256 of the summary.json beside them", function () {
    expect(html).to.include(`<code>${summarySha}</code>`);
    expect(md).to.include(`\`${summarySha}\``);
  });

  it("both show versions, knobs, each verdict and what it measured, and the expected windows against the measured times", function () {
    for (const text of [html, md]) {
      expect(text)
        .to.include("kindest/node:v1.34.0")
        .and.include("sha256:aaaa")
        .and.include("rekindle/controller:dev");
      expect(text)
        .to.include("controller.unhealthyAfterMs")
        .and.include("6000")
        .and.include("nodeLeaseDurationSeconds");
      expect(text).to.include("recovered in 14.2s").and.include("no recovery expected");
      expect(text)
        .to.include("2.0s–20.0s")
        .and.include("9.0s")
        .and.include("must not happen")
        .and.include("absent as required");
      expect(text).to.include("late").and.include("30.1s");
      expect(text).to.include("FAILED");
    }
    expect(html).to.match(
      /<a href="#node-loss\/baseline">node-loss\/baseline<\/a><\/td><td class="FAIL">FAIL<\/td>/,
    );
    expect(md).to.include(
      "| node-loss/baseline | FAIL | deployment:recovered at 30.1s; 1 of 1 forbidden milestones absent |",
    );
    expect(md).to.include("| node-pressure/disk | SKIP | needs &lt;a&gt; pressure \\| capability |");
  });

  it("the HTML is self-contained: inline CSS and the chart as inline SVG, nothing fetched, no script", function () {
    expect(html).to.include("<style>").and.include("<svg");
    expect(html).to.include(">fence:power-management:done</text>");
    expect(html).to.not.match(/<script|<link|\ssrc=|url\(/i);
    expect(html.match(/https?:\/\/[^\s"']+/g) ?? []).to.deep.equal(["http://www.w3.org/2000/svg"]);
  });

  it("escapes what it quotes", function () {
    expect(html).to.include("late: &lt;b&gt;deployment&lt;/b&gt; | &amp; more");
    expect(html).to.not.include("<b>deployment");
    expect(html).to.include("needs &lt;a&gt; pressure | capability");
    expect(md).to.include("late: <b>deployment</b> | & more"); // inside a fenced block, shown as written
  });

  it("the Markdown is appended to $GITHUB_STEP_SUMMARY, after what was there", function () {
    expect(readFileSync(stepSummary, "utf8")).to.equal(`earlier step\n${md}\n`);
  });

  it("a $GITHUB_STEP_SUMMARY that cannot be written is reported, the sign-off files still written", function () {
    const other = mkdtempSync(join(tmpdir(), "rekindle-signoff-"));
    writeSummary(other, summary);
    const written = writeSignoff(other, summary, new Map(), {
      GITHUB_STEP_SUMMARY: join(other, "no", "such", "dir"),
    });
    expect(written.stepSummary).to.equal(undefined);
    expect(written.stepSummaryError).to.include("ENOENT");
    expect(readFileSync(join(other, "signoff.md"), "utf8")).to.include(summary.runId);
  });
});
