import { expect } from "chai";
import { Coalescer } from "../../lib/util/coalesce.js";

describe("Coalescer", function () {
  it("joins the calls of one turn into one batch, and later calls into the next, never overlapping", async function () {
    const batches: string[][] = [];
    let running = 0;
    let overlapped = false;
    let firstStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (firstStarted = resolve));
    const coalescer = new Coalescer<string>(async (items) => {
      running++;
      if (running > 1) overlapped = true;
      batches.push([...items]);
      firstStarted();
      await new Promise((resolve) => setTimeout(resolve, 20));
      running--;
    });
    const first = ["a", "b", "c"].map((x) => coalescer.add(x));
    // Once the first batch runs (not after a timer: a stalled event loop runs a 5 ms timer before
    // the batch's setImmediate, and the later calls would then join the first batch).
    await started;
    const second = ["d", "e"].map((x) => coalescer.add(x));
    await Promise.all([...first, ...second]);
    expect(batches).to.deep.equal([
      ["a", "b", "c"],
      ["d", "e"],
    ]);
    expect(overlapped).to.equal(false);
  });

  it("rejects every call of a failed batch, and runs the next one all the same", async function () {
    let calls = 0;
    const coalescer = new Coalescer<number>((items) => {
      calls++;
      return calls === 1 ? Promise.reject(new Error(`batch of ${items.length} failed`)) : Promise.resolve();
    });
    const results = await Promise.allSettled([coalescer.add(1), coalescer.add(2)]);
    expect(results.map((r) => r.status)).to.deep.equal(["rejected", "rejected"]);
    expect(String((results[0] as PromiseRejectedResult).reason)).to.include("batch of 2 failed");
    await coalescer.add(3);
    expect(calls).to.equal(2);
  });
});
