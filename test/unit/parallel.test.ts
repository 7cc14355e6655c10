// `rekindle run --parallel N|auto`: the flag's parsing and refusals (exit 2 naming the input and
// what is valid), the `auto` rule, the work queue (longest expected first, each scenario to one
// cluster, a free cluster takes the next), the expected lengths it orders by (the catalogue's
// windows: the by-hand scenarios first), and the clusters' summaries joined into one serial-looking
// summary that is valid against the schema.
import { expect } from "chai";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { runEnvironment, type RunEnvironment } from "../../lib/report/environment.js";
import { joinParallelSummaries, type SlotRun } from "../../lib/report/parallel-join.js";
import type { RunSummary } from "../../lib/report/summary.js";
import { expectedEndMs, listExpectationInputs, scenarioLengthMs } from "../../lib/run/expected-length.js";
import {
  autoParallel,
  checkParallelProvider,
  CLUSTER_COST,
  clusterCount,
  clustersNeeded,
  defaultLayout,
  MAX_PARALLEL,
  parseParallel,
} from "../../lib/run/parallel-count.js";
import { drainQueue, queueOrder, ScenarioQueue } from "../../lib/run/parallel-queue.js";
import { familyGroups } from "../../lib/run/suite.js";
import { allScenarios } from "../../suites/index.js";
import { cli, expectExit } from "../support/cli-capture.js";
import { runSummary, scenario, scenarioRun, window } from "../support/summaries.js";
import { summarySchemaErrors } from "../support/summary-schema.js";
import { rekindleThrow } from "../support/assertions.js";

const GIB = 1024 ** 3;

describe("--parallel N|auto", function () {
  it("parses a cluster count from 1 to the maximum, and auto", function () {
    expect(parseParallel("1")).to.equal(1);
    expect(parseParallel("2")).to.equal(2);
    expect(parseParallel(String(MAX_PARALLEL))).to.equal(MAX_PARALLEL);
    expect(parseParallel("auto")).to.equal("auto");
  });

  for (const bad of ["0", "x", "-1", "1.5", "", "2x", String(MAX_PARALLEL + 1), "AUTO"]) {
    it(`refuses ${JSON.stringify(bad)} as bad input saying what is valid`, function () {
      const error = rekindleThrow(() => parseParallel(bad));
      expect(error.code).to.equal("INVALID_INPUT");
      expect(error.message).to.include(`--parallel ${JSON.stringify(bad)}`);
      expect(error.hint).to.include(`1 to ${MAX_PARALLEL}`).and.include("auto");
    });
  }

  for (const provider of ["kind", "existing", undefined]) {
    it(`refuses provider ${String(provider)}, naming the flag and the one valid provider`, function () {
      const error = rekindleThrow(() => {
        checkParallelProvider(provider, 2);
      });
      expect(error.code).to.equal("INVALID_INPUT");
      expect(error.message).to.include("--parallel 2").and.include("--provider sim");
    });
  }

  it("takes the sim provider", function () {
    expect(() => {
      checkParallelProvider("sim", "auto");
    }).not.to.throw();
  });

  it("rekindle run exits 2 on --parallel 0, --parallel x and --parallel on kind, before anything starts", async function () {
    for (const args of [
      ["--provider", "sim", "--parallel", "0"],
      ["--provider", "sim", "--parallel", "x"],
      ["--provider", "kind", "--parallel", "2"],
    ]) {
      const result = await cli(["run", ...args, "--report-dir", "/nonexistent/never-written"]);
      expect(result.code, args.join(" ")).to.equal(2);
      expect(result.stderr).to.include("--parallel");
    }
  });

  it("refuses an empty selection (exit 2) before any report directory or cluster", async function () {
    const dir = "/nonexistent/never-written";
    const argv = ["run", "--provider", "sim", "--parallel", "2", "--scenario", "^nothing-matches$"];
    expectExit(await cli([...argv, "--report-dir", dir]), 2, "the selection is empty");
  });

  it("refuses --keep-cluster with --parallel (it would keep every cluster)", async function () {
    const result = await cli(["run", "--provider", "sim", "--parallel", "2", "--keep-cluster"]);
    expectExit(result, 2, "--keep-cluster");
  });

  it("--parallel 1 is a serial run: --keep-cluster goes with it", async function () {
    const result = await cli([
      ...["run", "--provider", "sim", "--parallel", "1", "--keep-cluster"],
      ...["--scenario", "^nothing-matches$", "--report-dir", "/nonexistent/never-written"],
    ]);
    // Refused for its pattern, as a serial run is, not for --keep-cluster.
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include("the selection is empty");
    expect(result.stderr).to.not.include("--keep-cluster does not go");
  });

  it("without --parallel: side by side (auto) on the sim, serially when the cluster is kept or not a sim", function () {
    expect(defaultLayout("sim", false)).to.equal("auto");
    expect(defaultLayout("sim", true)).to.equal(1);
    expect(defaultLayout("kind", false)).to.equal(1);
    expect(defaultLayout("existing", false)).to.equal(1);
  });
});

describe("--parallel auto", function () {
  const roomy = { cores: 64, freeMemoryBytes: 512 * GIB };
  /** `count` scenarios of equal length: as many clusters as scenarios could all be busy. */
  const even = (count: number) => Array.from({ length: count }, () => 60_000);

  it("on 2 cores with plenty of memory: limited by the cores, 6 clusters (2 × 0.45 / 0.15)", function () {
    const { clusters, why } = autoParallel({ cores: 2, freeMemoryBytes: 20 * GIB }, even(27));
    expect(clusters).to.equal(6);
    expect(why).to.include("2 cores");
    expect(autoParallel({ cores: 1, freeMemoryBytes: 20 * GIB }, even(27)).clusters).to.equal(3);
    expect(autoParallel({ cores: 4, freeMemoryBytes: 20 * GIB }, even(27)).clusters).to.equal(12);
    expect(autoParallel({ cores: 8, freeMemoryBytes: 64 * GIB }, even(27)).clusters).to.equal(16);
  });

  it("limited by free memory less the reserve", function () {
    const free = 2 * GIB + 2.5 * CLUSTER_COST.memoryBytes;
    expect(autoParallel({ cores: 64, freeMemoryBytes: free }, even(27)).clusters).to.equal(2);
  });

  it("no more clusters than the selection's total over its longest scenario: more could not end it sooner", function () {
    // Three 7-minute scenarios and 30 of half a minute: 36 minutes, at least 7 on one cluster.
    const fastLike = [
      ...Array.from({ length: 3 }, () => 420_000),
      ...Array.from({ length: 30 }, () => 30_000),
    ];
    expect(clustersNeeded(fastLike)).to.equal(6);
    const { clusters, why } = autoParallel(roomy, fastLike);
    expect(clusters).to.equal(6);
    expect(why).to.include("expected lengths over its longest = 6");
    // On one core the cores decide first.
    expect(autoParallel({ cores: 1, freeMemoryBytes: 20 * GIB }, fastLike).clusters).to.equal(3);
    expect(clustersNeeded([0, 0, 0])).to.equal(3);
  });

  it("never more clusters than scenarios, nor than the maximum, and at least one", function () {
    expect(autoParallel(roomy, even(3)).clusters).to.equal(3);
    expect(autoParallel(roomy, even(100)).clusters).to.equal(MAX_PARALLEL);
    expect(autoParallel({ cores: 1, freeMemoryBytes: 1 * GIB }, even(27)).clusters).to.equal(1);
  });

  it("a count is cut to the selection's size, saying so", function () {
    expect(clusterCount(4, even(2), roomy)).to.deep.equal({
      clusters: 2,
      why: "--parallel 4, but only 2 scenario(s)",
    });
    expect(clusterCount(2, even(5), roomy)).to.deep.equal({ clusters: 2, why: "--parallel 2" });
  });
});

describe("--parallel's work queue", function () {
  it("orders longest expected first, equal lengths in selection order", function () {
    const order = queueOrder([
      { id: "a", expectedMs: 10 },
      { id: "b", expectedMs: 400 },
      { id: "c", expectedMs: 10 },
      { id: "d", expectedMs: 30 },
    ]);
    expect(order).to.deep.equal(["b", "d", "a", "c"]);
  });

  it("hands each scenario to one cluster once, records who took it, and nothing after close() (what is left is reported as not run)", function () {
    const queue = new ScenarioQueue(["a", "b", "c"].map((id, i) => ({ id, expectedMs: i })));
    expect(queue.take(1)).to.equal("c");
    expect(queue.take(2)).to.equal("b");
    queue.close();
    expect(queue.take(1)).to.equal(undefined);
    expect(queue.left).to.deep.equal(["a"]);
    expect([...queue.taken]).to.deep.equal([
      ["c", 1],
      ["b", 2],
    ]);
  });

  it("a sized cluster takes only the scenarios that need more workers, a default one only the rest", function () {
    const queue = new ScenarioQueue([
      { id: "zone-long", expectedMs: 900, workers: 52 },
      { id: "loss", expectedMs: 300 },
      { id: "zone-short", expectedMs: 200, workers: 7 },
      { id: "three", expectedMs: 100, workers: 3 },
    ]);
    expect(queue.take(1, "default")).to.equal("loss");
    expect(queue.take(1, "default")).to.equal("three");
    expect(queue.take(1, "default")).to.equal(undefined);
    expect(queue.take(2, "sized")).to.equal("zone-long");
    expect(queue.left).to.deep.equal(["zone-short"]);
    expect(queue.take(3, "any")).to.equal("zone-short");
  });

  it("a free cluster takes the next: two long scenarios start on two clusters, the short ones fill in", function () {
    // Simulated clock: each cluster runs its scenario for its expected length, then asks again.
    const lengths: Record<string, number> = { long1: 400, long2: 390, s1: 30, s2: 30, s3: 20, s4: 10 };
    const queue = new ScenarioQueue(Object.entries(lengths).map(([id, expectedMs]) => ({ id, expectedMs })));
    const busyUntil = [0, 0];
    const ran: string[][] = [[], []];
    for (;;) {
      const slot = busyUntil[0]! <= busyUntil[1]! ? 0 : 1;
      const id = queue.take(slot + 1);
      if (id === undefined) break;
      ran[slot]!.push(id);
      busyUntil[slot]! += lengths[id]!;
    }
    expect(ran[0]![0]).to.equal("long1");
    expect(ran[1]![0]).to.equal("long2");
    // 880 ms of work on two clusters: 440 is the best any assignment can do.
    expect(Math.max(...busyUntil)).to.equal(440);
    expect(ran.flat().sort()).to.deep.equal(Object.keys(lengths).sort());
  });

  it("drainQueue runs one scenario at a time until the source has none, adding mocha's failures", async function () {
    const groups = familyGroups(["node-loss", "partition"]);
    const handed = ["partition/healed-after-fence", "node-loss/baseline"];
    const ran: string[][] = [];
    const failures = await drainQueue(
      { next: () => Promise.resolve(handed.shift()) },
      groups,
      (some) => {
        ran.push(some.flatMap((g) => g.scenarios.map((s) => `${g.name}:${s.definition.id}`)));
        return Promise.resolve(1);
      },
      new AbortController().signal,
    );
    expect(ran).to.deep.equal([["partition:partition/healed-after-fence"], ["node-loss:node-loss/baseline"]]);
    expect(failures).to.equal(2);
  });

  it("drainQueue stops taking once the run is interrupted", async function () {
    const abort = new AbortController();
    let asked = 0;
    await drainQueue(
      {
        next: () => {
          asked++;
          return Promise.resolve("node-loss/baseline");
        },
      },
      familyGroups(["node-loss"]),
      () => {
        abort.abort();
        return Promise.resolve(0);
      },
      abort.signal,
    );
    expect(asked).to.equal(1);
  });

  it("drainQueue refuses a scenario the run did not select", async function () {
    let error: unknown;
    try {
      await drainQueue(
        { next: () => Promise.resolve("nope/missing") },
        familyGroups(["node-loss"]),
        () => Promise.resolve(0),
        new AbortController().signal,
      );
    } catch (e) {
      error = e;
    }
    expect(String(error)).to.include("nope/missing");
  });

  it("at the fast profile the catalogue puts the 6-minute by-hand scenarios first", function () {
    const inputs = listExpectationInputs(TIMING_PROFILES.fast);
    const order = queueOrder(
      allScenarios().map((s) => ({ id: s.id, expectedMs: expectedEndMs(s.expected(inputs)) })),
    );
    const byHand = [
      "node-loss/force-delete-by-hand",
      "node-loss/drain-by-hand",
      "node-loss/force-delete-detach-disabled",
    ];
    expect(order.slice(0, 3).sort()).to.deep.equal([...byHand].sort());
    const lengths = allScenarios().map((s) => expectedEndMs(s.expected(inputs)));
    expect(Math.max(...lengths)).to.be.above(6 * 60_000);
  });

  it("a scenario's length counts its watch after its last window: every-zone-full's 314 s at the default profile", function () {
    const inputs = listExpectationInputs(TIMING_PROFILES.default);
    const everyZone = allScenarios().find((s) => s.id === "zone-disruption/every-zone-full");
    expect(everyZone?.watchMs?.(inputs)).to.equal(314_000);
    if (everyZone === undefined) return;
    expect(scenarioLengthMs(everyZone, inputs)).to.equal(expectedEndMs(everyZone.expected(inputs)) + 314_000);
    // Its windows run on to the taints lifted, past the other zones' taints (second-loss).
    expect(expectedEndMs(everyZone.expected(inputs))).to.be.above(200_000);
    const baseline = allScenarios().find((s) => s.id === "node-loss/baseline");
    if (baseline !== undefined)
      expect(scenarioLengthMs(baseline, inputs)).to.equal(expectedEndMs(baseline.expected(inputs)));
  });
});

describe("--parallel's joined summary", function () {
  // runEnvironment asks git for the commit: give a loaded machine room.
  this.timeout(30_000);
  let environment: RunEnvironment;
  before(async function () {
    environment = await runEnvironment({ provider: "sim", timing: TIMING_PROFILES.fast, cluster: "sim" });
  });
  const selection = ["node-loss/baseline", "node-loss/controller", "partition/healed-after-fence"];

  function slot(index: number, ids: string[], fields: Partial<RunSummary> = {}): SlotRun {
    const summary = runSummary(
      ids.map((id) =>
        scenario(
          id,
          [scenarioRun({ "deployment:recovered": 9_000 }, 9_000)],
          [window("deployment:recovered")],
        ),
      ),
      {
        schemaVersion: 2,
        provider: "sim",
        runId: `20260101-00000${index}-slot${index}`,
        startedAt: "2026-01-01T00:00:00.000Z",
        finishedAt: "2026-01-01T00:05:00.000Z",
        skipped: [],
        error: null,
        ...fields,
      },
    );
    return { index, reportDir: `/r/cluster-${index}`, summary, taken: ids };
  }

  function join(slots: SlotRun[], notRun: string[] = []): RunSummary {
    return joinParallelSummaries({
      runId: "20260101-000000-abcdef",
      startedAt: "2026-01-01T00:00:00.000Z",
      finishedAt: "2026-01-01T00:06:00.000Z",
      provider: "sim",
      profile: "fast",
      repeat: 1,
      selection,
      slots,
      chosenBy: "--parallel 2",
      notRun,
      environment,
    });
  }

  it("holds every cluster's scenarios in the selection's (serial) order, valid against the schema", function () {
    const summary = join([
      slot(1, ["partition/healed-after-fence", "node-loss/baseline"]),
      slot(2, ["node-loss/controller"]),
    ]);
    expect(summary.scenarios.map((s) => s.id)).to.deep.equal(selection);
    expect(summary.error).to.equal(null);
    expect(summary.parallel?.slots.map((s) => s.scenarios)).to.deep.equal([
      ["partition/healed-after-fence", "node-loss/baseline"],
      ["node-loss/controller"],
    ]);
    expect(summary.merged).to.equal(undefined);
    expect(summarySchemaErrors(JSON.parse(JSON.stringify(summary)))).to.deep.equal([]);
  });

  it("names the cluster whose harness broke, and one whose process died without a summary", function () {
    const broken = slot(2, [], {
      error: { code: "BOOT_FAILED", message: "kube-apiserver did not start", phase: "cluster-boot" },
    });
    const summary = join([slot(1, selection), broken]);
    expect(summary.error?.message).to.equal("cluster 2: kube-apiserver did not start");
    const lost: SlotRun = {
      index: 2,
      reportDir: "/r/cluster-2",
      summary: undefined,
      taken: ["node-loss/controller"],
      lost: {
        code: "HARNESS_FAILED",
        message: "the cluster's process ended (signal SIGKILL)",
        phase: "suites",
      },
    };
    const joined = join([slot(1, ["node-loss/baseline"]), lost], ["partition/healed-after-fence"]);
    expect(joined.error?.message).to.include("cluster 2:").and.include("SIGKILL");
    expect(joined.parallel?.notRun).to.deep.equal(["partition/healed-after-fence"]);
    expect(summarySchemaErrors(JSON.parse(JSON.stringify(joined)))).to.deep.equal([]);
  });

  it("an interrupt is the run's error as such", function () {
    const aborted = { code: "ABORTED", message: "rekindle run was interrupted", phase: "suites" } as const;
    const summary = join([
      slot(1, ["node-loss/baseline"], { error: aborted }),
      slot(2, [], { error: aborted }),
    ]);
    expect(summary.error).to.deep.equal(aborted);
  });
});
