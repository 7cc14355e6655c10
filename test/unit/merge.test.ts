// `rekindle merge`: shard summaries (written by the code's own writer, each the share shardRecord
// deals) joined into the summary one run would have written, its JUnit and sign-off; every input
// that cannot be merged refused with exit 2 naming the file and the reason; environment differences
// a matrix may have recorded, not refused; the exit code as the whole run's.
import { expect } from "chai";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { runEnvironment, type RunEnvironment } from "../../lib/report/environment.js";
import { mergeShardSummaries, readShardSummary } from "../../lib/report/merge.js";
import { shardRecord } from "../../lib/report/shard.js";
import { SUMMARY_SCHEMA_VERSION, writeSummary, type RunSummary } from "../../lib/report/summary.js";
import { cli } from "../support/cli-capture.js";
import { runSummary, scenario, scenarioRun, window } from "../support/summaries.js";
import { summarySchemaErrors } from "../support/summary-schema.js";
import { rekindleThrow } from "../support/assertions.js";
import { withoutStepSummary } from "../support/step-summary.js";

const READY = "deployment:recovered";
const IDS = ["node-loss/baseline", "node-loss/controller", "partition/healed", "safety/a", "safety/b"];

let environment: RunEnvironment;

/** Shard `index` of `count` of IDS as `rekindle run --shard` writes it (scenario `failing` failed). */
function shardSummary(index: number, count: number, failing?: string): RunSummary {
  const shard = shardRecord(IDS, { index, count });
  const scenarios = shard.scenarios.map((id) =>
    scenario(
      id,
      [scenarioRun({ [READY]: 9_000 }, 9_000, id === failing ? "failed" : "passed")],
      [window(READY)],
    ),
  );
  return runSummary(scenarios, {
    schemaVersion: SUMMARY_SCHEMA_VERSION,
    runId: `20260101-00000${index}-shard${index}`,
    provider: "sim",
    startedAt: `2026-01-01T00:0${index}:00.000Z`,
    finishedAt: `2026-01-01T00:1${index}:00.000Z`,
    skipped: [],
    environment: { ...environment, cluster: `sim cluster ${index}` },
    error: null,
    shard,
  });
}

/** Writes each summary with the run's writer into its own report directory; returns the directories. */
function writeShards(summaries: readonly (RunSummary | string)[]): string[] {
  const root = mkdtempSync(join(tmpdir(), "rekindle-merge-"));
  return summaries.map((summary, i) => {
    const dir = join(root, `shard-${i + 1}`);
    mkdirSync(dir);
    if (typeof summary === "string") writeFileSync(join(dir, "summary.json"), summary);
    else writeSummary(dir, summary);
    return dir;
  });
}

function merged(dirs: readonly string[]) {
  return mergeShardSummaries(dirs.map(readShardSummary));
}

describe("rekindle merge", function () {
  // runEnvironment asks git for the commit: give a loaded machine room.
  this.timeout(30_000);
  withoutStepSummary();
  before(async function () {
    environment = await runEnvironment({ provider: "sim", timing: TIMING_PROFILES.fast, cluster: "sim" });
  });

  it("joins every shard into the summary a whole run writes: valid, sorted by id, naming its shards", function () {
    const dirs = writeShards([1, 2, 3].map((k) => shardSummary(k, 3)));
    const { summary, warnings } = merged([dirs[2] ?? "", dirs[0] ?? "", dirs[1] ?? ""]);
    expect(summarySchemaErrors(JSON.parse(JSON.stringify(summary)))).to.deep.equal([]);
    expect(summary.scenarios.map((s) => s.id)).to.deep.equal(IDS);
    expect(summary.shard).to.equal(undefined);
    expect(summary.merged?.count).to.equal(3);
    expect(summary.merged?.selected).to.equal(5);
    expect(summary.merged?.shards.map((s) => [s.index, s.runId, s.source])).to.deep.equal(
      [1, 2, 3].map((k) => [k, `20260101-00000${k}-shard${k}`, join(dirs[k - 1] ?? "", "summary.json")]),
    );
    expect(summary.startedAt).to.equal("2026-01-01T00:01:00.000Z");
    expect(summary.finishedAt).to.equal("2026-01-01T00:13:00.000Z");
    expect(summary.error).to.equal(null);
    // Each shard names its own cluster: that is no difference.
    expect(summary.merged?.shards.map((s) => s.environmentDiffers)).to.deep.equal([[], [], []]);
    expect(warnings).to.deep.equal([]);
    // The same inputs, in any order, give the same summary.
    expect(JSON.stringify(merged(dirs).summary)).to.equal(JSON.stringify(summary));
  });

  it("records, and warns about, a shard whose Kubernetes or node image differs from the merged environment", function () {
    const other = shardSummary(2, 2);
    const kubernetes = { ...environment.kubernetes, apiserver: { version: "v1.33.0", source: "/version" } };
    const { summary, warnings } = merged(
      writeShards([
        shardSummary(1, 2),
        { ...other, environment: { ...environment, cluster: "c2", kubernetes } },
      ]),
    );
    expect(summary.merged?.shards.map((s) => s.environmentDiffers)).to.deep.equal([[], ["kubernetes"]]);
    expect(summary.environment?.kubernetes).to.deep.equal(environment.kubernetes);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include("shard 2/2").and.include("kubernetes");
  });

  it("takes a shard whose share was empty", function () {
    const dirs = writeShards([1, 2, 3, 4, 5, 6].map((k) => shardSummary(k, 6)));
    const { summary } = merged(dirs);
    expect(summary.scenarios.map((s) => s.id)).to.deep.equal(IDS);
    expect(summary.merged?.shards[5]?.scenarios).to.deep.equal([]);
  });

  it("a broken shard makes the merged run's error, naming the shard", function () {
    const broken = {
      ...shardSummary(2, 2),
      error: { code: "BOOT_FAILED", message: "etcd did not start", phase: "cluster-boot" as const },
    };
    const { summary } = merged(writeShards([shardSummary(1, 2), broken]));
    expect(summary.error).to.deep.include({ code: "BOOT_FAILED", phase: "cluster-boot" });
    expect(summary.error?.message).to.equal("shard 2/2: etcd did not start");
  });

  const refusals: [string, () => (RunSummary | string)[], RegExp][] = [
    ["a file that is not JSON", () => [shardSummary(1, 2), "{ not json"], /shard-2\/summary\.json: .*JSON/],
    [
      "a file not valid against the schema",
      () => [shardSummary(1, 2), { ...shardSummary(2, 2), provider: "vm" }],
      /shard-2\/summary\.json: not valid against docs\/summary\.schema\.json: \/provider must be equal to one of the allowed values/,
    ],
    [
      "a summary not run with --shard",
      () => [shardSummary(1, 2), { ...shardSummary(2, 2), shard: undefined }],
      /shard-2\/summary\.json: it was not run with --shard/,
    ],
    [
      "different shard counts",
      () => [shardSummary(1, 2), shardSummary(2, 3)],
      /shard-2\/summary\.json: its shard count n 3 differs from .*shard-1\/summary\.json's 2/,
    ],
    [
      "a missing shard",
      () => [shardSummary(1, 3), shardSummary(3, 3)],
      /shard 2\/3 missing \(given: .*shard-1\/summary\.json as 1\/3, .*shard-2\/summary\.json as 3\/3\)/,
    ],
    [
      "the same shard twice",
      () => [shardSummary(1, 2), shardSummary(1, 2)],
      /shard 1\/2 is given twice \(.*shard-1\/summary\.json and .*shard-2\/summary\.json\)/,
    ],
    [
      "overlapping shares",
      () => {
        const second = shardSummary(2, 2);
        return [
          shardSummary(1, 2),
          {
            ...second,
            shard: { ...second.shard!, scenarios: [...second.shard!.scenarios, "node-loss/baseline"] },
          },
        ];
      },
      /shard-2\/summary\.json: scenario node-loss\/baseline is in its share and in .*shard-1\/summary\.json's/,
    ],
    [
      "a scenario run outside the shard's share",
      () => {
        const [extra] = shardSummary(1, 2).scenarios;
        const second = shardSummary(2, 2);
        return [shardSummary(1, 2), { ...second, scenarios: [...second.scenarios, extra!] }];
      },
      /shard-2\/summary\.json: it reports scenario node-loss\/baseline, which is not in its share as shard 2\/2 \(it is .*shard-1\/summary\.json's\)/,
    ],
    [
      "different selections",
      () => [
        shardSummary(1, 2),
        { ...shardSummary(2, 2), shard: shardRecord([...IDS, "safety/c"], { index: 2, count: 2 }) },
      ],
      /shard-2\/summary\.json: its selection \(its sha256\) .* differs/,
    ],
    [
      "different profiles",
      () => [shardSummary(1, 2), { ...shardSummary(2, 2), profile: "default" }],
      /shard-2\/summary\.json: its profile "default" differs from .*"fast"/,
    ],
    [
      "different providers",
      () => [shardSummary(1, 2), { ...shardSummary(2, 2), provider: "kind" }],
      /its provider "kind" differs/,
    ],
    [
      "different repeats",
      () => [shardSummary(1, 2), { ...shardSummary(2, 2), repeat: 3 }],
      /its repeat 3 differs/,
    ],
    [
      "different git shas",
      () => {
        const second = shardSummary(2, 2);
        return [
          shardSummary(1, 2),
          {
            ...second,
            environment: { ...environment, rekindle: { ...environment.rekindle, gitSha: "f".repeat(40) } },
          },
        ];
      },
      /shard-2\/summary\.json: its git sha "f{40}" differs/,
    ],
    [
      "different knob values",
      () => [
        shardSummary(1, 2),
        { ...shardSummary(2, 2), environment: { ...environment, timing: TIMING_PROFILES.default } },
      ],
      /its knob values \(environment\.timing\) .* differs/,
    ],
  ];
  for (const [what, inputs, message] of refusals) {
    it(`refuses ${what}: exit 2, naming the file and why`, async function () {
      const dirs = writeShards(inputs());
      const error = rekindleThrow(() => merged(dirs));
      expect(error.code).to.equal("INVALID_INPUT");
      expect(error.message).to.match(message);
      const out = join(mkdtempSync(join(tmpdir(), "rekindle-merge-out-")), "merged");
      const result = await cli(["merge", ...dirs, "--out", out]);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.match(message);
      expect(existsSync(join(out, "summary.json")), "nothing written").to.equal(false);
    });
  }

  it("refuses a file that cannot be read, naming it", async function () {
    const [dir = ""] = writeShards([shardSummary(1, 2)]);
    const gone = join(dir, "..", "nowhere", "summary.json");
    const result = await cli(["merge", dir, gone]);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include(`cannot merge ${gone}`).and.include("ENOENT");
  });

  it("refuses --out a shard's own report directory, and no inputs at all", async function () {
    const dirs = writeShards([shardSummary(1, 1)]);
    const clash = await cli(["merge", ...dirs, "--out", dirs[0] ?? ""]);
    expect(clash.code).to.equal(2);
    expect(clash.stderr).to.include("is the report directory of");
    expect((await cli(["merge", "--out", "x"])).code).to.equal(2);
  });

  it("the command writes summary.json, junit.xml and the sign-off carrying the merged summary's sha256", async function () {
    const dirs = writeShards([1, 2].map((k) => shardSummary(k, 2)));
    const out = join(mkdtempSync(join(tmpdir(), "rekindle-merge-out-")), "merged");
    const result = await cli(["merge", ...dirs, "--out", out]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.include("scenarios: 5 passed, 0 failed");
    const bytes = readFileSync(join(out, "summary.json"));
    const written = JSON.parse(bytes.toString("utf8")) as RunSummary;
    expect(summarySchemaErrors(written)).to.deep.equal([]);
    expect(written.scenarios.map((s) => s.id)).to.deep.equal(IDS);
    const sha = createHash("sha256").update(bytes).digest("hex");
    expect(readFileSync(join(out, "signoff.md"), "utf8"))
      .to.include(sha)
      .and.include("merged from");
    expect(readFileSync(join(out, "signoff.html"), "utf8")).to.include(sha);
    const junit = readFileSync(join(out, "junit.xml"), "utf8");
    expect(junit).to.include('tests="5" failures="0"');
    for (const id of IDS) expect(junit).to.include(`name="${id}"`);
    // Merging again gives the same bytes.
    expect((await cli(["merge", ...dirs, "--out", out])).code).to.equal(0);
    expect(readFileSync(join(out, "summary.json")).equals(bytes)).to.equal(true);
  });

  it("exits as the whole run would: 1 when a scenario failed, 3 when a shard's harness broke, 130 when interrupted", async function () {
    const failing = writeShards([shardSummary(1, 2, "safety/a"), shardSummary(2, 2, "safety/a")]);
    expect((await cli(["merge", ...failing, "--out", join(failing[0] ?? "", "..", "m1")])).code).to.equal(1);
    const error = (code: string) => ({
      ...shardSummary(2, 2),
      error: { code, message: "x", phase: "suites" as const },
    });
    const broken = writeShards([shardSummary(1, 2), error("UNREACHABLE")]);
    expect((await cli(["merge", ...broken, "--out", join(broken[0] ?? "", "..", "m2")])).code).to.equal(3);
    const stopped = writeShards([shardSummary(1, 2), error("ABORTED")]);
    expect((await cli(["merge", ...stopped, "--out", join(stopped[0] ?? "", "..", "m3")])).code).to.equal(
      130,
    );
  });
});
