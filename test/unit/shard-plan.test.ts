import { expect } from "chai";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastGateSeconds, planShards } from "../support/shard-plan.js";

const SOURCES: Record<string, string> = {
  "families-a.test.ts": 'import { gateSimRun } from "../support/gate-sim-run.js";',
  "families-b.test.ts": 'import { gateSimRun } from "../support/gate-sim-run.js";',
  "kind-1.test.ts": "await startKindCluster({})",
  "kind-2.test.ts": 'import { runOnKind } from "../support/kind-run.js";',
  "big.test.ts": "",
  "mid.test.ts": "",
  "small.test.ts": "",
  "new.test.ts": "",
};
const SECONDS = new Map([
  ["kind-1.test.ts", 100],
  ["kind-2.test.ts", 50],
  ["big.test.ts", 200],
  ["mid.test.ts", 90],
  ["small.test.ts", 10],
  ["families-a.test.ts", 300],
]);
const plan = (shardCount: number) =>
  planShards({
    files: Object.keys(SOURCES),
    sourceOf: (f) => SOURCES[f] ?? "",
    seconds: SECONDS,
    shardCount,
  });

describe("the integration layer's shard plan", function () {
  it("runs the files that share the families run alone, first, and every other file in exactly one shard", function () {
    const { alone, shards } = plan(2);
    expect(alone).to.deep.equal(["families-a.test.ts", "families-b.test.ts"]);
    const sharded = shards.flat().sort();
    expect(sharded).to.deep.equal(
      Object.keys(SOURCES)
        .filter((f) => !alone.includes(f))
        .sort(),
    );
  });

  it("keeps the files that build kind clusters in one shard and balances by the last gate's seconds", function () {
    const { shards } = plan(2);
    const kindShard = shards.find((s) => s.includes("kind-1.test.ts"));
    expect(kindShard).to.include("kind-2.test.ts");
    // big (200) alone on one side; kind (150) + mid (90) + the median-weighted new file on the other.
    expect(shards.find((s) => s.includes("big.test.ts"))).to.not.include("kind-1.test.ts");
    expect(shards).to.have.length(2);
  });

  it("with one shard runs the rest as one process, and refuses a shard count that is not a whole number of at least 1", function () {
    expect(plan(1).shards).to.have.length(1);
    expect(() => plan(0)).to.throw(/at least 1, not 0/);
    expect(() => plan(1.5)).to.throw(/at least 1, not 1.5/);
  });

  it("reads each file's seconds from the newest gate results file that has integration rows", function () {
    const dir = mkdtempSync(join(tmpdir(), "shard-plan-"));
    const gate = (date: string, ms: number) => ({
      date,
      rows: [{ files: { integration: [{ file: "test/integration/x.test.ts", ms }] } }],
    });
    writeFileSync(join(dir, "gate-old.json"), JSON.stringify(gate("2026-01-01", 1000)));
    writeFileSync(join(dir, "gate-new.json"), JSON.stringify(gate("2026-02-01", 4000)));
    writeFileSync(join(dir, "gate-no-files.json"), JSON.stringify({ date: "2026-03-01", rows: [{}] }));
    writeFileSync(join(dir, "gate-broken.json"), "{");
    expect([...lastGateSeconds(dir)]).to.deep.equal([["test/integration/x.test.ts", 4]]);
    expect(lastGateSeconds(join(dir, "absent")).size).to.equal(0);
  });
});
