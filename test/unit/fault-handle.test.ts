// Fault handles over a fake capability: registered and journalled before the first side effect,
// a failure half-way reverts every node hit, revert is idempotent, dispose reverts.
import { expect } from "chai";
import { FaultInjector, faultDeadlineMs, type FaultInjectorOptions } from "../../lib/fault/injector.js";
import { FAULT_DEADLINES } from "../../lib/fault/types.js";
import { rekindleRejection, rekindleThrow } from "../support/assertions.js";
import { FakePartition, MemoryJournal } from "../support/fake-fault.js";

class Undos {
  readonly names: string[] = [];
  readonly runs: (() => Promise<void>)[] = [];
  registerUndo(name: string, run: () => Promise<void>): void {
    this.names.push(name);
    this.runs.push(run);
  }
  async undoAll(): Promise<void> {
    for (const run of [...this.runs].reverse()) await run();
  }
}

function setup(extra: Partial<FaultInjectorOptions> = {}) {
  const partition = new FakePartition();
  const journal = new MemoryJournal();
  const undos = new Undos();
  const injector = new FaultInjector({
    ...extra,
    capabilities: { partition },
    runId: "run-1",
    undo: undos,
    journal,
    locator: { provider: "sim", root: "/tmp/sim" },
    holder: { host: "here", pid: 1 },
    now: () => Date.parse("2026-11-24T10:00:00Z"),
  });
  return { partition, journal, undos, injector };
}

describe("fault handles", () => {
  it("a 3-node partition failing on the 2nd node reverts the 1st and the 2nd, and rethrows with the cause", async () => {
    const { partition, journal, injector, undos } = setup();
    partition.failOn.add("w2");
    const error = await rekindleRejection(
      injector.inject({ action: { kind: "partition" }, nodes: ["w1", "w2", "w3"] }),
    );
    expect(error.code).to.equal("COMMAND_FAILED");
    expect(error.message).to.contain("partition of w2 failed: cannot cut w2");
    expect(error.message).to.contain("reverted w1, w2");
    expect((error.cause as Error).message).to.equal("cannot cut w2");
    expect(partition.log).to.deep.equal(["partition w1", "partition w2", "heal w2", "heal w1"]);
    expect([...partition.partitioned]).to.deep.equal([]);
    expect(journal.records.size, "record removed after the revert").to.equal(0);
    // The undo was registered, and running it now changes nothing.
    expect(undos.names).to.deep.equal(["revert the partition on w1, w2, w3"]);
    await undos.undoAll();
    expect(partition.log).to.have.length(4);
  });

  it("waits the run's phase spread once, after the undo is registered and before the first fault acts", async () => {
    const { partition, undos, injector } = setup({
      beforeFirstApply: () => {
        partition.log.push(`spread (undos ${undos.names.length})`);
        return Promise.resolve();
      },
    });
    await injector.inject({ action: { kind: "partition" }, nodes: ["w1"] });
    await injector.inject({ action: { kind: "partition" }, nodes: ["w2"] });
    expect(partition.log).to.deep.equal(["spread (undos 1)", "partition w1", "partition w2"]);
  });

  it("registers the undo and writes the record before the first side effect, and each node as it is hit", async () => {
    const { partition, journal, undos, injector } = setup();
    let atFirstEffect: { undos: number; writes: number; log: number } | undefined;
    const handle = await injector.inject({
      action: { kind: "partition" },
      nodes: ["w1", "w2"],
      onFirstEffect: () => {
        atFirstEffect = {
          undos: undos.names.length,
          writes: journal.writes.length,
          log: partition.log.length,
        };
      },
    });
    expect(atFirstEffect).to.deep.equal({ undos: 1, writes: 2, log: 0 });
    expect(journal.writes[0]?.nodes).to.deep.equal([]);
    expect(journal.writes[1]?.nodes.map((n) => `${n.name}:${n.state}`)).to.deep.equal(["w1:applying"]);
    const last = journal.records.get(handle.id);
    expect(last?.nodes.map((n) => `${n.name}:${n.state}`)).to.deep.equal(["w1:applied", "w2:applied"]);
    expect(last?.locator).to.deep.equal({ provider: "sim", root: "/tmp/sim" });
    expect(handle.deadline.toISOString()).to.equal("2026-11-24T11:00:00.000Z");
    await handle.revert();
  });

  it("pressure: the fault's time zero is when the provider says its setup is done, not when apply starts", async () => {
    const log: string[] = [];
    const pressure = {
      applyPressure: (node: string, _kind: string, options?: { onEffect?: () => void }) => {
        log.push(`setup ${node}`);
        options?.onEffect?.();
        log.push(`fill ${node}`);
        return Promise.resolve();
      },
      relievePressure: (node: string) => {
        log.push(`relieve ${node}`);
        return Promise.resolve();
      },
    };
    const injector = new FaultInjector({
      capabilities: { pressure },
      runId: "run-1",
      undo: new Undos(),
      journal: new MemoryJournal(),
      locator: { provider: "sim", root: "/tmp/sim" },
      holder: { host: "here", pid: 1 },
      now: () => Date.parse("2026-11-24T10:00:00Z"),
    });
    const handle = await injector.inject({
      action: { kind: "pressure", pressure: "memory" },
      nodes: ["w1"],
      onFirstEffect: () => log.push("time zero"),
    });
    expect(log).to.deep.equal(["setup w1", "time zero", "fill w1"]);
    await handle.revert();
    // A provider that never says: its return is time zero, never before its setup.
    const silent = new FaultInjector({
      capabilities: {
        pressure: {
          ...pressure,
          applyPressure: (node: string) => (log.push(`quiet ${node}`), Promise.resolve()),
        },
      },
      runId: "run-2",
      undo: new Undos(),
      journal: new MemoryJournal(),
      locator: { provider: "sim", root: "/tmp/sim" },
      holder: { host: "here", pid: 1 },
      now: () => Date.parse("2026-11-24T10:00:00Z"),
    });
    log.length = 0;
    await (
      await silent.inject({
        action: { kind: "pressure", pressure: "disk" },
        nodes: ["w2"],
        onFirstEffect: () => log.push("time zero"),
      })
    ).revert();
    expect(log).to.deep.equal(["quiet w2", "time zero", "relieve w2"]);
  });

  it("revert is idempotent and reverts newest first; a failed revert keeps the record and is retried", async () => {
    const { partition, journal, injector } = setup();
    const handle = await injector.inject({ action: { kind: "partition" }, nodes: ["w1", "w2"] });
    partition.healFailsOn.add("w1");
    const error = await rekindleRejection(handle.revert());
    expect(error.message).to.contain("failed on w1");
    expect(journal.records.get(handle.id)?.nodes.map((n) => `${n.name}:${n.state}`)).to.deep.equal([
      "w1:applied",
      "w2:reverted",
    ]);
    await handle.revert();
    await handle.revert();
    expect(partition.log).to.deep.equal(["partition w1", "partition w2", "heal w2", "heal w1", "heal w1"]);
    expect(journal.records.size).to.equal(0);
  });

  it("await using reverts at the end of the block; a reverted handle refuses to apply", async () => {
    const { partition, injector } = setup();
    let kept: Awaited<ReturnType<typeof injector.begin>> | undefined;
    {
      await using handle = await injector.inject({ action: { kind: "partition" }, nodes: ["w1"] });
      kept = handle;
      expect([...partition.partitioned]).to.deep.equal(["w1"]);
    }
    expect([...partition.partitioned]).to.deep.equal([]);
    expect((await rekindleRejection(kept.apply(["w2"]))).code).to.equal("CONFLICT");
  });

  it("a concurrent fault that fails on one node reverts every node, the failed one too", async () => {
    const { partition, injector } = setup();
    partition.failOn.add("w2");
    await rekindleRejection(
      injector.inject({ action: { kind: "partition" }, nodes: ["w1", "w2", "w3"], concurrent: true }),
    );
    expect([...partition.partitioned]).to.deep.equal([]);
    expect(partition.log.filter((l) => l.startsWith("heal")).sort()).to.deep.equal([
      "heal w1",
      "heal w2",
      "heal w3",
    ]);
  });

  it("a staggered fault applied node by node reverts the earlier nodes when a later one fails", async () => {
    const { partition, injector } = setup();
    partition.failOn.add("w3");
    const handle = await injector.begin({ action: { kind: "partition" } });
    await handle.apply(["w1"]);
    await handle.apply(["w2"]);
    await rekindleRejection(handle.apply(["w3"]));
    expect([...partition.partitioned]).to.deep.equal([]);
    expect(partition.log.slice(3)).to.deep.equal(["heal w3", "heal w2", "heal w1"]);
  });

  it("a fault whose capability the cluster lacks is refused before anything is registered", async () => {
    const { injector, undos } = setup();
    const error = await rekindleRejection(injector.begin({ action: { kind: "stop" } }));
    expect(error.code).to.equal("PRECONDITION");
    expect(error.message).to.contain("lifecycle");
    expect(undos.names).to.deep.equal([]);
  });

  it("a fault still applied at its deadline is reverted by the process that holds it", async () => {
    const partition = new FakePartition();
    const journal = new MemoryJournal();
    const injector = new FaultInjector({
      capabilities: { partition },
      runId: "run-1",
      undo: new Undos(),
      journal,
      locator: { provider: "sim", root: "/tmp/sim" },
    });
    await injector.inject({ action: { kind: "partition" }, nodes: ["w1"], deadlineMs: 30 });
    expect([...partition.partitioned]).to.deep.equal(["w1"]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect([...partition.partitioned]).to.deep.equal([]);
    expect(journal.records.size).to.equal(0);
  });

  it("deadlines: a duration plus the margin, else the default; past the maximum is refused", () => {
    expect(faultDeadlineMs({})).to.equal(FAULT_DEADLINES.defaultMs);
    expect(faultDeadlineMs({ durationMs: 20_000 })).to.equal(20_000 + FAULT_DEADLINES.marginMs);
    expect(rekindleThrow(() => faultDeadlineMs({ deadlineMs: 2 * 3_600_000 })).code).to.equal(
      "INVALID_INPUT",
    );
    expect(rekindleThrow(() => faultDeadlineMs({ deadlineMs: 0 })).code).to.equal("INVALID_INPUT");
  });
});
