// The fence step runner (lib/controller/fence-steps.ts): one run per node at once, at most `limit`
// runs at once, the rest in order, and settle() waits for all of them. And the background tasks
// the holds' Events are written with (lib/util/bounded-parallel.ts).
import { expect } from "chai";
import { FenceStepRunner } from "../../lib/controller/fence-steps.js";
import { BackgroundTasks } from "../../lib/util/bounded-parallel.js";

/** A run that ends when its release is called; what started and ended, in order. */
function gate(log: string[], name: string) {
  let release: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  const work = async () => {
    log.push(`start ${name}`);
    await done;
    log.push(`end ${name}`);
  };
  return { work, release };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("fence steps beside the passes", function () {
  it("runs a node's steps once at a time: a second run for a busy node is refused", async function () {
    const runner = new FenceStepRunner({ limit: 4 });
    const log: string[] = [];
    const a = gate(log, "a");
    expect(runner.run("a", a.work)).to.equal(true);
    expect(runner.busy("a")).to.equal(true);
    expect(runner.run("a", gate(log, "a again").work)).to.equal(false);
    a.release();
    await runner.settle();
    expect(log).to.deep.equal(["start a", "end a"]);
    expect(runner.busy("a")).to.equal(false);
    expect(runner.run("a", gate(log, "a later").work)).to.equal(true);
  });

  it("runs at most `limit` at once; the rest wait in order and count as busy", async function () {
    const runner = new FenceStepRunner({ limit: 2 });
    const log: string[] = [];
    const gates = ["a", "b", "c", "d"].map((name) => ({ name, ...gate(log, name) }));
    for (const g of gates) runner.run(g.name, g.work);
    await tick();
    expect(log).to.deep.equal(["start a", "start b"]);
    expect(runner.busy("c")).to.equal(true);
    expect(runner.size).to.equal(4);
    gates[1]?.release();
    await tick();
    await tick();
    expect(log).to.deep.equal(["start a", "start b", "end b", "start c"]);
    for (const g of gates) g.release();
    await runner.settle();
    expect(log.filter((l) => l.startsWith("end"))).to.have.length(4);
    expect(runner.size).to.equal(0);
  });

  it("a run that throws frees its slot and its node", async function () {
    const runner = new FenceStepRunner({ limit: 1 });
    runner.run("a", () => Promise.reject(new Error("driver down")));
    let ranB = false;
    runner.run("b", () => {
      ranB = true;
      return Promise.resolve();
    });
    await runner.settle();
    expect(ranB).to.equal(true);
    expect(runner.busy("a")).to.equal(false);
  });
});

describe("background tasks (the holds' Event writes)", function () {
  it("the pusher does not wait; at most `limit` run at once, in order; failures are swallowed; settle waits", async function () {
    const tasks = new BackgroundTasks(2);
    const log: string[] = [];
    const gates = ["a", "b", "c"].map((name) => ({ name, ...gate(log, name) }));
    tasks.push(() => Promise.reject(new Error("API server away")));
    for (const g of gates) tasks.push(g.work);
    // The failed task freed its slot: a and b run, c waits.
    await tick();
    expect(log).to.deep.equal(["start a", "start b"]);
    expect(tasks.size).to.equal(3);
    for (const g of gates) g.release();
    await tasks.settle();
    expect(log.indexOf("start c")).to.be.above(log.indexOf("end a"));
    expect(log.filter((l) => l.startsWith("end"))).to.have.members(["end a", "end b", "end c"]);
    expect(tasks.size).to.equal(0);
  });
});
