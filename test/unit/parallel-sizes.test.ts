// --parallel's cluster sizes (parallel-sizes.ts) and its pool of cluster processes (parallel-pool.ts).
import { expect } from "chai";
import { runPool, type PoolSlot } from "../../lib/run/parallel-pool.js";
import { ScenarioQueue } from "../../lib/run/parallel-queue.js";
import { makespanMs, slotSizes, type SlotSize } from "../../lib/run/parallel-sizes.js";
import type { SlotExit } from "../../lib/run/slot-process.js";

describe("--parallel's cluster sizes", function () {
  const mixed = [
    { id: "zd-1", expectedMs: 600, workers: 52 },
    { id: "zd-2", expectedMs: 400, workers: 7 },
    { id: "a", expectedMs: 300 },
    { id: "b", expectedMs: 300 },
    { id: "c", expectedMs: 200, workers: 3 },
    { id: "d", expectedMs: 200 },
  ];

  it("ends a list's scenarios, longest first on the first free cluster, when the busiest cluster ends", function () {
    // The queue's own order, so not the best split (1000 ms): 600+300+200 and 400+300+200.
    expect(makespanMs([600, 400, 300, 300, 200, 200], 2)).to.equal(1100);
    expect(makespanMs([600, 400, 300], 5)).to.equal(600);
    expect(makespanMs([], 3)).to.equal(0);
  });

  it("gives the scenarios that need more workers clusters of the most they need, as many as end the selection soonest", function () {
    // Sized 600 + 400, the rest 300 + 300 + 200 + 200: two clusters each end both by 600 ms.
    const { slots, why } = slotSizes(mixed, 4);
    expect(slots).to.deep.equal([
      { kind: "default" },
      { kind: "default" },
      { kind: "sized", workers: 52 },
      { kind: "sized", workers: 52 },
    ]);
    expect(why).to.equal("2 of them with 52 workers for the 2 scenario(s) that need more than 3");
  });

  it("keeps at least one cluster for each kind, and no more sized ones than sized scenarios", function () {
    expect(slotSizes(mixed, 2).slots.map((s) => s.kind)).to.deep.equal(["default", "sized"]);
    expect(slotSizes(mixed, 16).slots.filter((s) => s.kind === "sized")).to.have.length(2);
    const short = [{ id: "zd", expectedMs: 1, workers: 12 }, ...mixed.slice(2)];
    expect(slotSizes(short, 5).slots.filter((s) => s.kind === "sized")).to.have.length(1);
  });

  it("one cluster keeps the default layout and says what skips; a selection of one kind sizes every cluster alike", function () {
    expect(slotSizes(mixed, 1)).to.deep.equal({
      slots: [{ kind: "any" }],
      why: "one cluster of the default size: the 2 scenario(s) needing 52 workers skip",
    });
    expect(slotSizes(mixed.slice(0, 2), 2)).to.deep.equal({
      slots: [
        { kind: "any", workers: 52 },
        { kind: "any", workers: 52 },
      ],
    });
    expect(slotSizes(mixed.slice(2), 3).slots).to.deep.equal([
      { kind: "any" },
      { kind: "any" },
      { kind: "any" },
    ]);
  });
});

describe("--parallel's pool of clusters", function () {
  /** A fake cluster: takes scenarios of its kind one after another (each a turn), then exits. */
  function fakeStart(queue: ScenarioQueue, log: string[], failing = new Set<number>()) {
    return (index: number, size: SlotSize): PoolSlot => {
      log.push(`start ${index} ${size.kind}`);
      const state = { aborted: false };
      const exited = (async (): Promise<SlotExit> => {
        for (;;) {
          await new Promise((resolve) => setImmediate(resolve));
          if (state.aborted) break;
          const id = queue.take(index, size.kind);
          if (id === undefined) break;
          log.push(`${index} ran ${id}`);
        }
        const harnessError = failing.has(index)
          ? { code: "HARNESS_FAILED" as const, message: "x" }
          : undefined;
        return {
          done: {
            type: "done",
            failed: 0,
            testFailures: 0,
            interrupted: state.aborted,
            ...(harnessError ? { harnessError } : {}),
          },
          exitCode: 0,
          signal: null,
        };
      })();
      return {
        exited,
        abort: () => {
          state.aborted = true;
        },
      };
    };
  }
  const selection = [
    { id: "zd", expectedMs: 50, workers: 12 },
    ...Array.from({ length: 6 }, (_, i) => ({ id: `s${i}`, expectedMs: 40 })),
  ];

  it("replaces a sized cluster whose scenarios are done by a default-sized one while others still have work", async function () {
    const queue = new ScenarioQueue(selection);
    const log: string[] = [];
    const result = await runPool({
      sizes: [{ kind: "default" }, { kind: "sized", workers: 12 }],
      queue,
      signal: new AbortController().signal,
      start: fakeStart(queue, log),
    });
    expect(result.replaced).to.equal(1);
    expect(result.exits.map((e) => e.index)).to.deep.equal([1, 2, 3]);
    expect(log).to.include("start 3 default");
    expect(log.filter((l) => l.startsWith("3 ran")).length).to.be.greaterThan(0);
    expect(queue.left).to.deep.equal([]);
    expect(log).to.include("2 ran zd");
  });

  it("replaces none when the sized cluster broke, or when nothing is left for the others", async function () {
    const broken = new ScenarioQueue(selection);
    const log: string[] = [];
    const result = await runPool({
      sizes: [{ kind: "default" }, { kind: "sized", workers: 12 }],
      queue: broken,
      signal: new AbortController().signal,
      start: fakeStart(broken, log, new Set([2])),
    });
    expect(result.replaced).to.equal(0);
    const onlySized = new ScenarioQueue(selection.slice(0, 2));
    const again = await runPool({
      sizes: [{ kind: "default" }, { kind: "sized", workers: 12 }],
      queue: onlySized,
      signal: new AbortController().signal,
      start: fakeStart(onlySized, []),
    });
    expect(again.replaced).to.equal(0);
  });

  it("an interrupt aborts every running cluster and starts no replacement", async function () {
    const queue = new ScenarioQueue(selection);
    const controller = new AbortController();
    controller.abort();
    const result = await runPool({
      sizes: [{ kind: "default" }, { kind: "sized", workers: 12 }],
      queue,
      signal: controller.signal,
      start: fakeStart(queue, []),
    });
    expect(result.replaced).to.equal(0);
    expect(result.exits.every((e) => e.exit.done?.interrupted === true)).to.equal(true);
    expect(queue.left).to.have.length(selection.length);
  });
});
