// The verbs' fault layer (lib/fault/verb.ts): a fault left by a command is journalled with the
// command as its holder and no undo in this process; `node start|heal` ends only what a command or
// a dead run left, on that node; reap leaves a command's fault until its deadline. Fakes only.
import { expect } from "chai";
import { hostname } from "node:os";
import type { ClusterUnderTest } from "../../lib/cluster/provider.js";
import { reapFaults } from "../../lib/fault/reaper.js";
import { checkVerbDeadline, endNodeFaults, leaveFault } from "../../lib/fault/verb.js";
import { rekindleRejection, rekindleThrow } from "../support/assertions.js";
import { FakePartition, MemoryJournal } from "../support/fake-fault.js";

function fakeCluster(partition: FakePartition, extra: Partial<ClusterUnderTest> = {}): ClusterUnderTest {
  return {
    provider: "sim",
    description: "fake",
    capabilities: { partition },
    unsupported: { lifecycle: "the fake has no lifecycle" },
    faultLocator: () => ({ provider: "sim", root: "/fake" }),
    ...extra,
  } as unknown as ClusterUnderTest;
}

describe("node verbs through the fault layer", () => {
  it("leaves a partition journalled, held by the command, due at --for", async () => {
    const partition = new FakePartition();
    const journal = new MemoryJournal();
    const before = Date.now();
    const record = await leaveFault({
      cluster: fakeCluster(partition),
      journal,
      action: { kind: "partition" },
      node: "worker-2",
      deadlineMs: 120_000,
      command: "rekindle node partition",
    });
    expect(partition.log).to.deep.equal(["partition worker-2"]);
    const [stored] = [...journal.records.values()];
    expect(stored?.holder).to.deep.equal({
      host: hostname(),
      pid: process.pid,
      command: "rekindle node partition",
    });
    expect(stored?.nodes.map((n) => `${n.name} ${n.state}`)).to.deep.equal(["worker-2 applied"]);
    const due = Date.parse(record.deadline) - before;
    expect(due).to.be.within(120_000, 121_000);
    // Its command gone, reap still leaves it before its deadline (unless its run is named).
    expect(
      (
        await reapFaults({
          journal,
          holderAlive: () => false,
          reconnect: () => Promise.reject(new Error("no")),
        })
      ).entries[0]?.outcome,
    ).to.equal("held");
  });

  it("says why a provider cannot do the fault, before anything is journalled", async () => {
    const journal = new MemoryJournal();
    const error = await rekindleRejection(
      leaveFault({
        cluster: fakeCluster(new FakePartition()),
        journal,
        action: { kind: "stop" },
        node: "worker-1",
        command: "rekindle node stop",
      }),
    );
    expect(error.message).to.include("lifecycle: the fake has no lifecycle");
    expect(journal.records.size).to.equal(0);
  });

  it("heal ends a command's partition of that node only, and removes its record", async () => {
    const partition = new FakePartition();
    const journal = new MemoryJournal();
    const cluster = fakeCluster(partition);
    for (const node of ["worker-1", "worker-2"])
      await leaveFault({
        cluster,
        journal,
        action: { kind: "partition" },
        node,
        command: "rekindle node partition",
      });
    const { ended, left } = await endNodeFaults({
      cluster,
      journal,
      node: "worker-2",
      kinds: ["partition", "pressure"],
    });
    expect(ended.map((r) => r.nodes[0]?.name)).to.deep.equal(["worker-2"]);
    expect(left).to.deep.equal([]);
    expect(partition.log.at(-1)).to.equal("heal worker-2");
    expect([...journal.records.values()].map((r) => r.nodes[0]?.name)).to.deep.equal(["worker-1"]);
  });

  it("leaves a fault a live run holds to that run", async () => {
    const partition = new FakePartition();
    const journal = new MemoryJournal();
    await journal.write({
      id: "fault-run-1",
      runId: "run-1",
      action: { kind: "partition" },
      nodes: [{ name: "worker-1", state: "applied", at: "2026-11-24T10:00:00.000Z" }],
      appliedAt: "2026-11-24T10:00:00.000Z",
      deadline: "2999-01-01T00:00:00.000Z",
      locator: { provider: "sim", root: "/fake" },
      holder: { host: hostname(), pid: process.pid },
    });
    const { ended, left } = await endNodeFaults({
      cluster: fakeCluster(partition),
      journal,
      node: "worker-1",
      kinds: ["partition"],
    });
    expect(ended).to.deep.equal([]);
    expect(left[0]?.reason).to.include("holds it and reverts it itself");
    expect(partition.log).to.deep.equal([]);
  });

  it("refuses a deadline under 30 s or over an hour", () => {
    expect(
      rekindleThrow(() => {
        checkVerbDeadline(10_000);
      }).code,
    ).to.equal("INVALID_INPUT");
    expect(
      rekindleThrow(() => {
        checkVerbDeadline(3_600_001);
      }).message,
    ).to.include("valid: from 30s to 1h");
    checkVerbDeadline(30_000);
    checkVerbDeadline(3_600_000);
  });
});
