// `rekindle run --shard k/n`: parsing, the round-robin deal over the sorted selection (every
// scenario in exactly one shard, sizes within one, independent of order), the selection as mocha's
// --scenario matching sees it, the groups cut to a share, and `rekindle list --shard`.
import { expect } from "chai";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import {
  parseShard,
  selectionSha256,
  shardAssignment,
  shardRecord,
  sortedSelection,
} from "../../lib/report/shard.js";
import type { RunSummary } from "../../lib/report/summary.js";
import { familyGroups } from "../../lib/run/suite.js";
import { planShard, selectedScenarioIds, shardGroups } from "../../lib/run/shard-run.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { listExpectationInputs } from "../../lib/cli/catalogue.js";
import { planScenarioFiles } from "../../lib/scenario-file/plan.js";
import { listedFileScenarios } from "../../lib/scenario-file/scenarios.js";
import { allScenarios, SUITE_FAMILIES } from "../../suites/index.js";
import { cli } from "../support/cli-capture.js";
import { summarySchemaErrors } from "../support/summary-schema.js";
import { rekindleThrow } from "../support/assertions.js";

describe("--shard k/n", function () {
  it("parses k/n with 1 ≤ k ≤ n", function () {
    expect(parseShard("1/1")).to.deep.equal({ index: 1, count: 1 });
    expect(parseShard("3/4")).to.deep.equal({ index: 3, count: 4 });
  });

  for (const bad of ["0/2", "3/2", "1/0", "2", "a/b", "1/2/3", "-1/2", "1.5/2", "1/257", ""]) {
    it(`refuses ${JSON.stringify(bad)} as bad input saying what is valid`, function () {
      const error = rekindleThrow(() => parseShard(bad));
      expect(error.code).to.equal("INVALID_INPUT");
      expect(error.message).to.include(JSON.stringify(bad));
      expect(error.hint).to.include("k/n");
    });
  }

  const ids = allScenarios().map((s) => s.id);

  for (const n of [1, 2, 3, 4, 7, 40]) {
    it(`n = ${n}: every selected scenario in exactly one shard, shard sizes within one of each other`, function () {
      const shares = [...Array(n).keys()].map((i) => shardRecord(ids, { index: i + 1, count: n }).scenarios);
      expect(shares.flat().sort()).to.deep.equal(sortedSelection(ids));
      const sizes = shares.map((s) => s.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).to.be.at.most(1);
    });
  }

  it("a scenario's shard depends on the selection and n only: not on the order scenarios come in", function () {
    const reversed = [...ids].reverse();
    const shuffled = [...ids].sort((a, b) => (a.length - b.length) * 7 + (a < b ? 1 : -1));
    expect([...shardAssignment(reversed, 4)]).to.deep.equal([...shardAssignment(ids, 4)]);
    expect([...shardAssignment(shuffled, 4)]).to.deep.equal([...shardAssignment(ids, 4)]);
    expect(selectionSha256(shuffled)).to.equal(selectionSha256(ids));
    // Pinned: the deal is round-robin over the ids in code-point order.
    const few = ["b/two", "a/one", "c/three", "a/zero"];
    expect(Object.fromEntries(shardAssignment(few, 2))).to.deep.equal({
      "a/one": 1,
      "a/zero": 2,
      "b/two": 1,
      "c/three": 2,
    });
  });

  it("records the selection's size and sha256, and the shard's share", function () {
    const record = shardRecord(["x/b", "x/a", "x/c"], { index: 2, count: 2 });
    expect(record).to.deep.equal({
      index: 2,
      count: 2,
      selected: 3,
      selectionSha256: selectionSha256(["x/a", "x/b", "x/c"]),
      scenarios: ["x/b"],
    });
    expect(shardRecord(["x/a"], { index: 2, count: 2 }).scenarios).to.deep.equal([]);
  });
});

describe("the selection a shard is dealt from", function () {
  it("is what --scenario matches of mocha's full title: suite name, id and title", function () {
    expect(selectedScenarioIds(["node-loss"], undefined, "node-loss/baseline ")).to.deep.equal([
      "node-loss/baseline",
    ]);
    // The suite's name is part of the title mocha matches: "^node-loss " takes the whole family.
    const family = selectedScenarioIds([...SUITE_FAMILIES], undefined, "^node-loss ");
    expect(family).to.deep.equal(familyGroups(["node-loss"])[0]?.scenarios.map((s) => s.definition.id));
    expect(selectedScenarioIds(["preflight", "safety"], undefined, undefined)).to.have.length(
      familyGroups(["preflight", "safety"]).flatMap((g) => g.scenarios).length,
    );
  });

  it("of scenario files: their ids and titles as the run names their tests, before any cluster", async function () {
    const plan = planScenarioFiles([
      join(PROJECT_ROOT, "examples", "deployment-toleration-30s"),
      join(PROJECT_ROOT, "examples", "database-pdb-controller"),
    ]);
    const listed = await listedFileScenarios(plan, listExpectationInputs(plan.profile));
    expect(selectedScenarioIds([], plan, undefined)).to.deep.equal(listed.map((s) => s.id));
    expect(selectedScenarioIds([], plan, "^scenario files file/deployment-")).to.deep.equal([
      "file/deployment-toleration-30s",
    ]);
    const title = listed[1]?.title ?? "";
    expect(
      selectedScenarioIds([], plan, ` — ${title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`),
    ).to.deep.equal(["file/database-pdb-controller"]);
  });

  it("an empty selection cannot be sharded: bad input naming the pattern", function () {
    const error = rekindleThrow(() =>
      planShard({ index: 1, count: 2 }, ["node-loss"], undefined, "nothing-like-this"),
    );
    expect(error.code).to.equal("INVALID_INPUT");
    expect(error.message).to.include("--shard 1/2").and.include("nothing-like-this");
    expect(planShard(undefined, ["node-loss"], undefined, undefined)).to.equal(undefined);
  });

  it("the groups are cut to the share, empty groups dropped; without --shard they stay whole", function () {
    const groups = familyGroups(["preflight", "node-loss"]);
    const record = planShard({ index: 1, count: 3 }, ["preflight", "node-loss"], undefined, undefined);
    const cut = shardGroups(groups, record);
    expect(cut.flatMap((g) => g.scenarios.map((s) => s.definition.id)).sort()).to.deep.equal(
      record?.scenarios,
    );
    expect(cut.every((g) => g.scenarios.length > 0)).to.equal(true);
    expect(shardGroups(groups, undefined)).to.equal(groups);
  });
});

describe("rekindle list --shard and rekindle run --shard (command line)", function () {
  // The empty shard's run asks git for the environment: give a loaded machine room.
  this.timeout(30_000);

  it("list --shard k/n lists each share once: together, the selection", async function () {
    const shares: string[][] = [];
    for (const k of [1, 2, 3]) {
      const result = await cli([
        "list",
        "--suite",
        "node-loss",
        "--suite",
        "safety",
        "-o",
        "json",
        "--shard",
        `${k}/3`,
      ]);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(new RegExp(`shard ${k}/3: \\d+ of the \\d+ selected scenarios`));
      shares.push((JSON.parse(result.stdout) as { scenarios: { id: string }[] }).scenarios.map((s) => s.id));
    }
    expect(shares.flat().sort()).to.deep.equal(
      sortedSelection(selectedScenarioIds(["node-loss", "safety"], undefined, undefined)),
    );
    const text = await cli(["list", "--suite", "node-loss", "--shard", "1/7"]);
    expect(text.stdout.match(/^node-loss\//gm)).to.have.length(1);
  });

  it("list refuses a bad --shard, and --shard with --markdown, with exit 2", async function () {
    const bad = await cli(["list", "--shard", "5/4"]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('--shard "5/4"');
    expect((await cli(["list", "--markdown", "--shard", "1/2"])).code).to.equal(2);
  });

  it("run of a shard whose share is empty starts no cluster, exits 0 and writes a valid summary saying so", async function () {
    const dir = join(mkdtempSync(join(tmpdir(), "rekindle-empty-shard-")), "report");
    // preflight has one scenario: shard 2 of 2 holds none.
    const saved = process.env["GITHUB_STEP_SUMMARY"];
    delete process.env["GITHUB_STEP_SUMMARY"];
    try {
      const result = await cli([
        "run",
        "--provider",
        "sim",
        "--suite",
        "preflight",
        "--shard",
        "2/2",
        "--report-dir",
        dir,
        "--no-html",
      ]);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.include("shard     2/2: 0 of the 1 selected scenarios — nothing to run");
      const summary = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as RunSummary;
      expect(summarySchemaErrors(summary)).to.deep.equal([]);
      expect(summary.shard).to.deep.include({ index: 2, count: 2, selected: 1, scenarios: [] });
      expect(summary.scenarios).to.deep.equal([]);
      expect(summary.error).to.equal(null);
      expect(readFileSync(join(dir, "signoff.md"), "utf8")).to.include("NOTHING TO RUN");
      expect(readFileSync(join(dir, "junit.xml"), "utf8")).to.include('tests="0"');
    } finally {
      if (saved !== undefined) process.env["GITHUB_STEP_SUMMARY"] = saved;
    }
  });

  it("run refuses a bad --shard and an empty selection before anything starts (exit 2)", async function () {
    expect((await cli(["run", "--provider", "sim", "--shard", "0/2"])).code).to.equal(2);
    const empty = await cli(["run", "--provider", "sim", "--scenario", "no-such-scenario", "--shard", "1/2"]);
    expect(empty.code).to.equal(2);
    expect(empty.stderr).to.include("the selection is empty");
  });

  it("run and list refuse a --scenario that selects nothing, showing what a pattern is matched against (exit 2)", async function () {
    const dir = "/nonexistent/never-written";
    const anchored = "^safety/every-zone-silent-healed$";
    const run = await cli([
      "run",
      "--provider",
      "sim",
      "--suite",
      "safety",
      "--scenario",
      anchored,
      "--report-dir",
      dir,
    ]);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include(`--scenario "${anchored}" matches no scenario of the families safety`);
    expect(run.stderr).to.match(
      /e\.g\. "safety safety\/[a-z-]+ — [^"]+": "safety\/[a-z-]+ —" selects that one/,
    );
    expect(existsSync(dir)).to.equal(false);
    const list = await cli(["list", "--suite", "safety", "--scenario", anchored]);
    expect(list.code).to.equal(2);
    expect(list.stdout).to.equal("");
    expect(list.stderr).to.include("matches no scenario");
    // The form the hint gives selects the scenario.
    const fixed = await cli(["list", "--suite", "safety", "--scenario", "safety/every-zone-silent-healed —"]);
    expect(fixed.code).to.equal(0);
    expect(fixed.stdout).to.include("safety/every-zone-silent-healed");
  });
});

describe("the conformance-matrix workflow", function () {
  interface Step {
    name?: string;
    run?: string;
  }
  interface Job {
    needs?: string;
    if?: string;
    strategy?: { "fail-fast"?: boolean; matrix?: { shard?: number[] } };
    steps: Step[];
  }
  const workflow = parse(
    readFileSync(join(PROJECT_ROOT, ".github", "workflows", "conformance-matrix.yml"), "utf8"),
  ) as { jobs: Record<string, Job> };
  const { shards, merge } = workflow.jobs;

  it("runs each shard k of n in a matrix of k = 1..n, every shard to its end", function () {
    const ks = shards?.strategy?.matrix?.shard ?? [];
    expect(ks).to.deep.equal([...Array(ks.length).keys()].map((i) => i + 1));
    expect(shards?.strategy?.["fail-fast"]).to.equal(false);
    const run = shards?.steps.find((s) => s.run?.includes("rekindle run") === true)?.run ?? "";
    expect(run).to.include(`--shard \${{ matrix.shard }}/${ks.length}`);
    expect(run).to.include("--report-dir reports/shard-${{ matrix.shard }}");
  });

  it("merges every shard's reports after them, also when a shard failed", function () {
    expect(merge?.needs).to.equal("shards");
    expect(merge?.if).to.equal("always()");
    const run = merge?.steps.find((s) => s.run?.includes("rekindle merge") === true)?.run ?? "";
    const ks = shards?.strategy?.matrix?.shard ?? [];
    for (const k of ks) expect(run).to.include(`shards/conformance-shard-${k} `);
    expect(run).to.include("--out ");
  });
});
