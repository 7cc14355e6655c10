// The agent's dead-man's switch bookkeeping on a fake clock: faults kept on disk before they are
// applied, reverted at their deadline, disarmed by a revert, and after a restart reverted at once
// when past due or re-armed for the time left.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  DeadlineTimers,
  NodeFaultStore,
  splitDue,
  type Clock,
  type NodeFault,
} from "../../lib/agent/deadline.js";

/** Timers that fire only when the test advances time. */
class FakeClock implements Clock {
  #now = Date.parse("2026-11-24T10:00:00.000Z");
  #timers = new Map<number, { at: number; run: () => void }>();
  #next = 1;
  now(): number {
    return this.#now;
  }
  setTimeout(run: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + ms, run });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }
  advance(ms: number): void {
    this.#now += ms;
    for (const [id, timer] of [...this.#timers].sort((a, b) => a[1].at - b[1].at)) {
      if (timer.at > this.#now) continue;
      this.#timers.delete(id);
      timer.run();
    }
  }
}

const at = (clock: Clock, ms: number) => new Date(clock.now() + ms).toISOString();

describe("agent deadlines", function () {
  let dir: string;
  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), "agent-deadline-"));
  });
  afterEach(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  it("reverts at the deadline, not before", function () {
    const clock = new FakeClock();
    const due: string[] = [];
    const timers = new DeadlineTimers((fault) => due.push(fault.action), clock);
    timers.arm({ action: "partition", request: "partition.w", id: "1", deadline: at(clock, 30_000) });
    clock.advance(29_999);
    expect(due).to.deep.equal([]);
    clock.advance(1);
    expect(due).to.deep.equal(["partition"]);
    expect(timers.armed()).to.deep.equal([]);
  });

  it("a revert on request disarms the timer; re-arming replaces the old deadline", function () {
    const clock = new FakeClock();
    const due: string[] = [];
    const timers = new DeadlineTimers((fault) => due.push(`${fault.action}@${fault.id}`), clock);
    timers.arm({ action: "stop", request: "stop.w", id: "1", deadline: at(clock, 10_000) });
    timers.disarm("stop");
    clock.advance(20_000);
    expect(due).to.deep.equal([]);
    timers.arm({ action: "stop", request: "stop.w", id: "2", deadline: at(clock, 10_000) });
    timers.arm({ action: "stop", request: "stop.w", id: "3", deadline: at(clock, 60_000) });
    clock.advance(10_000);
    expect(due).to.deep.equal([]);
    clock.advance(50_000);
    expect(due).to.deep.equal(["stop@3"]);
  });

  it("after a restart, a past-due fault is due at once and the others keep their time left", function () {
    const clock = new FakeClock();
    const store = new NodeFaultStore(dir);
    const late: NodeFault = { action: "stop", request: "stop.w", id: "1", deadline: at(clock, -1) };
    const later: NodeFault = {
      action: "partition",
      request: "partition.w",
      id: "2",
      deadline: at(clock, 45_000),
    };
    store.save(late);
    store.save(later);
    // A new agent process reads the same directory.
    const { due, pending } = splitDue(new NodeFaultStore(dir).all(), clock.now());
    expect(due).to.deep.equal([late]);
    expect(pending).to.deep.equal([later]);
  });

  it("keeps one fault per action on disk; removed once reverted; a corrupt file counts as due", function () {
    const clock = new FakeClock();
    const store = new NodeFaultStore(dir);
    store.save({ action: "pressure-disk", request: "r", id: "1", deadline: at(clock, 1000) });
    store.save({ action: "pressure-disk", request: "r", id: "2", deadline: at(clock, 2000) });
    expect(store.all().map((f) => f.id)).to.deep.equal(["2"]);
    store.remove("pressure-disk");
    expect(store.all()).to.deep.equal([]);
    writeFileSync(join(dir, "faults", "partition.json"), "{not json");
    writeFileSync(join(dir, "faults", "unrelated.txt"), "x");
    const { due } = splitDue(store.all(), clock.now());
    expect(due.map((f) => f.action)).to.deep.equal(["partition"]);
  });
});
