import { expect } from "chai";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildTrend } from "../../lib/report/trend.js";
import { trendSvg } from "../../lib/report/trend-svg.js";
import { trendHtml } from "../../lib/report/trend-html.js";
import { runSummary, scenario, scenarioRun, writeSummaries } from "../support/summaries.js";
import { cli } from "../support/cli-capture.js";

/** A run started at `startedAt` whose scenario recorded these milestones. */
function run(
  runId: string,
  startedAt: string,
  milestones: Record<string, number>,
  id = "node-loss/x",
  extra: Record<string, unknown> = {},
) {
  return runSummary([scenario(id, [scenarioRun(milestones, 1_000)])], { runId, startedAt }, extra);
}

/** The values of `attribute` on every element of `tag` in the SVG, in document order. */
function attributes(svg: string, tag: string, attribute: string): string[] {
  return [...svg.matchAll(new RegExp(`<${tag} [^>]*${attribute}="([^"]*)"`, "g"))].map((m) => m[1] ?? "");
}

/** The SVG of one series (its <g class="series"> element). */
function seriesOf(svg: string, milestone: string): string {
  const start = svg.indexOf(`<g class="series" data-milestone="${milestone}">`);
  return start < 0 ? "" : svg.slice(start, svg.indexOf("</g>", start));
}

describe("rekindle trend: the model and its SVG", function () {
  // Given out of order: the trend orders runs by startedAt.
  const summaries = [
    run("r3", "2026-03-01T00:00:00Z", { "node-not-ready": 6_000, "deployment:recovered": 30_000 }),
    run("r1", "2026-01-01T00:00:00Z", { "node-not-ready": 5_000, "deployment:recovered": 20_000 }),
    run("r2", "2026-02-01T00:00:00Z", { "node-not-ready": 5_500 }),
  ].map((summary, i) => ({ path: `run-${i}/summary.json`, summary }));

  it("orders the runs by startedAt and keeps one series per milestone (the fault itself not drawn)", function () {
    const trend = buildTrend(summaries);
    expect(trend.runs.map((r) => r.runId)).to.deep.equal(["r1", "r2", "r3"]);
    const [x] = trend.scenarios;
    expect(x?.series.map((s) => s.milestone)).to.have.members(["node-not-ready", "deployment:recovered"]);
    expect(x?.series.find((s) => s.milestone === "deployment:recovered")?.points).to.deep.equal([
      { run: 0, atMs: 20_000 },
      { run: 2, atMs: 30_000 },
    ]);
  });

  it("draws one series per milestone, its points left to right in startedAt order", function () {
    const trend = buildTrend(summaries);
    const [x] = trend.scenarios;
    if (x === undefined) throw new Error("no scenario in the trend");
    const svg = trendSvg(x, trend.runs);
    expect(attributes(svg, "g", "data-milestone")).to.have.members([
      "node-not-ready",
      "deployment:recovered",
    ]);
    const notReady = seriesOf(svg, "node-not-ready");
    expect(attributes(notReady, "circle", "data-run")).to.deep.equal(["r1", "r2", "r3"]);
    const xs = attributes(notReady, "circle", "cx").map(Number);
    expect(xs).to.deep.equal([...xs].sort((a, b) => a - b));
    expect(new Set(xs).size).to.equal(3);
    // Later is higher on the page's y axis: smaller y.
    const ys = attributes(notReady, "circle", "cy").map(Number);
    expect(ys[2]).to.be.lessThan(ys[0] ?? 0);
    // The run missing a milestone has no point in that series.
    expect(attributes(seriesOf(svg, "deployment:recovered"), "circle", "data-run")).to.deep.equal([
      "r1",
      "r3",
    ]);
    expect(attributes(svg, "g", "data-run")).to.deep.equal(["r1", "r2", "r3"]);
  });

  it("labels each run with its date and git sha when the environment has one, else its run id", function () {
    const sha = (gitDirty: boolean) => ({
      environment: { rekindle: { version: "0.1.0", gitSha: "0123456789abcdef", gitDirty } },
    });
    const trend = buildTrend([
      { path: "a", summary: run("r9", "2026-04-01T12:34:56Z", { a: 1 }, "s", sha(false)) },
      { path: "b", summary: run("r8", "2026-03-01T00:00:00Z", { a: 1 }, "s") },
    ]);
    const [x] = trend.scenarios;
    if (x === undefined) throw new Error("no scenario in the trend");
    const svg = trendSvg(x, trend.runs);
    expect(svg).to.include("2026-04-01 12:34 · 0123456<").and.include("2026-03-01 00:00 · r8");
    const dirty = buildTrend([
      { path: "a", summary: run("r9", "2026-04-01T12:34:56Z", { a: 1 }, "s", sha(true)) },
    ]);
    expect(dirty.runs[0]?.gitSha).to.equal("0123456789abcdef-dirty");
    const [d] = dirty.scenarios;
    expect(d && trendSvg(d, dirty.runs)).to.include("2026-04-01 12:34 · 0123456-dirty");
  });

  it("escapes scenario, milestone and run ids", function () {
    const hostile = run('r"<1>', "2026-01-01T00:00:00Z", { "<script>&": 1_000 }, "x/<b>&'");
    const trend = buildTrend([{ path: "p<", summary: hostile }]);
    const html = trendHtml(trend);
    expect(html).not.to.include("<script>").and.not.to.include("<b>");
    expect(html)
      .to.include('data-milestone="&lt;script&gt;&amp;"')
      .and.include("x/&lt;b&gt;&amp;&#39;")
      .and.include('data-run="r&quot;&lt;1&gt;"');
  });

  it("is self-contained: one inline SVG per scenario, nothing fetched", function () {
    const trend = buildTrend([
      ...summaries,
      { path: "other", summary: run("r4", "2026-04-01T00:00:00Z", { a: 1 }, "partition/y") },
    ]);
    const html = trendHtml(trend);
    expect(html.match(/<svg /g)).to.have.length(2);
    expect(html).not.to.match(/\b(src|href)=/);
    expect(html).not.to.match(/@import|url\(/);
    expect(html.replaceAll('xmlns="http://www.w3.org/2000/svg"', "")).not.to.include("http");
  });
});

describe("rekindle trend (command line)", function () {
  it("writes the page from summary files and report directories", async function () {
    const [a = "", b = ""] = writeSummaries([
      run("r1", "2026-01-01T00:00:00Z", { "node-not-ready": 5_000 }),
      run("r2", "2026-01-02T00:00:00Z", { "node-not-ready": 6_000 }),
    ]);
    const out = join(mkdtempSync(join(tmpdir(), "rekindle-trend-")), "trend.html");
    const { code, stdout } = await cli(["trend", a, dirname(b), "--out", out]);
    expect(code).to.equal(0);
    expect(stdout).to.include(out).and.include("2 runs, 1 scenarios");
    const html = readFileSync(out, "utf8");
    expect(html).to.include('data-milestone="node-not-ready"');
  });

  it("refuses mixed providers or profiles unless --allow-mismatch", async function () {
    const [a = "", b = ""] = writeSummaries([
      run("r1", "2026-01-01T00:00:00Z", { n: 1 }),
      runSummary([scenario("s", [scenarioRun({ n: 1 })])], { provider: "sim" }),
    ]);
    const out = join(mkdtempSync(join(tmpdir(), "rekindle-trend-")), "trend.html");
    const refused = await cli(["trend", a, b, "--out", out]);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.include("provider").and.include("--allow-mismatch");
    expect(existsSync(out)).to.equal(false);
    const allowed = await cli(["trend", a, b, "--out", out, "--allow-mismatch"]);
    expect(allowed.code).to.equal(0);
    expect(allowed.stderr).to.include("warning: comparing runs that differ in provider");
    expect(readFileSync(out, "utf8")).to.include("kind + sim");
  });

  it("bad input exits 2 naming the file, and writes nothing", async function () {
    const [good = "", foreign = ""] = writeSummaries([run("r1", "2026-01-01T00:00:00Z", { n: 1 }), "[1, 2]"]);
    const out = join(mkdtempSync(join(tmpdir(), "rekindle-trend-")), "trend.html");
    const missing = await cli(["trend", good, "/no/such/run", "--out", out]);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.include("/no/such/run");
    const notSummary = await cli(["trend", good, foreign, "--out", out]);
    expect(notSummary.code).to.equal(2);
    expect(notSummary.stderr).to.include(`${foreign} is not a rekindle summary.json`);
    const none = await cli(["trend", "--out", out]);
    expect(none.code).to.equal(2);
    expect(none.stderr).to.include("at least one summary.json");
    expect(existsSync(out)).to.equal(false);
    const unwritable = await cli(["trend", good, "--out", "/no/such/dir/trend.html"]);
    expect(unwritable.code).to.equal(2);
    expect(unwritable.stderr).to.include("/no/such/dir/trend.html");
  });

  it("--help prints the usage and exits 0", async function () {
    const { code, stdout } = await cli(["trend", "-h"]);
    expect(code).to.equal(0);
    expect(stdout).to.include("rekindle trend <summary.json|report dir>...");
  });
});
