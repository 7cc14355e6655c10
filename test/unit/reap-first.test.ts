// `rekindle run` reaps its cluster first: it says what it found, goes on when the journal cannot be
// read, and stops before any scenario when a fault it found could not be reverted.
import { expect } from "chai";
import type { ClusterUnderTest } from "../../lib/cluster/provider.js";
import type { FaultJournal } from "../../lib/fault/journal.js";
import { reapBeforeRun } from "../../lib/run/reap-first.js";
import type { Progress } from "../../lib/util/progress.js";
import { silentProgress } from "../../lib/util/progress.js";
import { rekindleRejection } from "../support/assertions.js";
import { MemoryJournal } from "../support/fake-fault.js";

function lines(): { progress: Progress; said: string[] } {
  const said: string[] = [];
  return {
    said,
    progress: {
      ...silentProgress,
      info: (message: string) => {
        said.push(message);
      },
    },
  };
}

// Never asked for its kubeconfig: each test hands the journal in.
const cluster = {} as ClusterUnderTest;

describe("reaping before a run", () => {
  it("says so in one line when the journal is empty", async () => {
    const { progress, said } = lines();
    await reapBeforeRun(cluster, progress, new MemoryJournal());
    expect(said).to.deep.equal(["fault journal: nothing left by an earlier run"]);
  });

  it("goes on, saying why, when the journal cannot be read", async () => {
    const { progress, said } = lines();
    const unreadable: FaultJournal = {
      write: () => Promise.resolve(),
      remove: () => Promise.resolve(),
      list: () => Promise.reject(new Error("configmaps is forbidden")),
    };
    await reapBeforeRun(cluster, progress, unreadable);
    expect(said).to.deep.equal(["fault journal: not read (configmaps is forbidden); reaping skipped"]);
  });

  it("stops the run when a dead run's fault cannot be reverted, after saying which", async () => {
    const { progress, said } = lines();
    const journal = new MemoryJournal();
    await journal.write({
      id: "fault-gone-1-abcdef",
      runId: "gone",
      action: { kind: "stop" },
      nodes: [{ name: "worker-1", state: "applied", at: "2026-11-24T09:00:00.000Z" }],
      appliedAt: "2026-11-24T09:00:00.000Z",
      deadline: "2026-11-24T09:30:00.000Z",
      // A sim cluster whose state directory is gone: it cannot be reached to start the node.
      locator: { provider: "sim", root: "/nonexistent/rekindle-sim" },
      holder: { host: "another-machine", pid: 1 },
    });
    const error = await rekindleRejection(reapBeforeRun(cluster, progress, journal));
    expect(error.code).to.equal("HARNESS_FAILED");
    expect(said[0]).to.equal("fault journal: 1 record(s) found");
    expect(said[1]).to.contain("FAILED to revert stop of worker-1 (run gone");
    expect(said[1]).to.contain("no sim cluster");
    expect(journal.records.size, "the record stays for rekindle reap").to.equal(1);
  });
});
