// Reaping a dead run on a cluster rekindle did not create also deletes its scenarios' namespaces
// (a SIGKILLed run never reaches their undo); never a verb's, a live run's or another provider's.
import { expect } from "chai";
import { deadExistingRuns, deleteRunNamespaces } from "../../lib/fault/dead-run-namespaces.js";
import type { ReapEntry, ReapOutcome } from "../../lib/fault/reaper.js";
import type { FaultRecord } from "../../lib/fault/types.js";
import type { NodeFaultLocator } from "../../lib/cluster/provider.js";
import { list, startFakeApiServer } from "../support/fake-apiserver.js";

const EXISTING: NodeFaultLocator = { provider: "existing", agentNamespace: "rekindle-agent" };

function entry(
  runId: string,
  outcome: ReapOutcome,
  options: { locator?: NodeFaultLocator; command?: string } = {},
): ReapEntry {
  const record: FaultRecord = {
    id: `fault-${runId}-${outcome}`,
    runId,
    action: { kind: "stop" },
    nodes: [{ name: "worker-1", state: "applied", at: "2026-11-24T10:00:01Z" }],
    appliedAt: "2026-11-24T10:00:00Z",
    deadline: "2026-11-24T10:01:15Z",
    locator: options.locator ?? EXISTING,
    holder: { host: "gone", pid: 1, ...(options.command ? { command: options.command } : {}) },
  };
  return { record, outcome };
}

describe("the namespaces a dead run left", () => {
  it("are the reaped existing-cluster runs': not a verb's, a run with a fault left live, or a kind run's", () => {
    const runs = deadExistingRuns({
      unreadable: [],
      entries: [
        entry("existing-dead", "reverted"),
        entry("existing-verb", "reverted", { command: "rekindle node stop" }),
        entry("existing-half", "reverted"),
        entry("existing-half", "failed"),
        entry("kind-run", "reverted", { locator: { provider: "kind", cluster: "rekindle" } }),
        entry("existing-live", "live"),
      ],
    });
    expect(runs).to.deep.equal(["existing-dead"]);
  });

  it("are deleted by the run label, each named, PodGC probes' finalizers taken off first", async () => {
    const ns = "/api/v1/namespaces/node-loss-manual-1-ab12";
    const api = await startFakeApiServer({
      "GET /api/v1/namespaces": () =>
        list("NamespaceList", [{ metadata: { name: "node-loss-manual-1-ab12" } }]),
      [`GET ${ns}/pods`]: () => list("PodList", [{ metadata: { name: "rekindle-podgc-probe-abc123" } }]),
      [`PATCH ${ns}/pods/rekindle-podgc-probe-abc123`]: () => ({ body: { kind: "Pod" } }),
      [`DELETE ${ns}/pods/rekindle-podgc-probe-abc123`]: () => ({ body: { kind: "Pod" } }),
      [`DELETE ${ns}`]: () => ({ body: { kind: "Namespace" } }),
    });
    try {
      const deleted = await deleteRunNamespaces(api.kc, ["existing-dead"]);
      expect(deleted).to.deep.equal(["node-loss-manual-1-ab12 (run existing-dead)"]);
      expect(api.requests).to.include(
        "GET /api/v1/namespaces?labelSelector=rekindle.dev%2Frun%3Dexisting-dead",
      );
      expect(api.requests).to.include("DELETE /api/v1/namespaces/node-loss-manual-1-ab12");
      const probe = `${ns}/pods/rekindle-podgc-probe-abc123`;
      expect(api.requests.indexOf(`PATCH ${probe}`), "the probe released before its namespace")
        .to.be.at.least(0)
        .and.below(api.requests.indexOf(`DELETE ${ns}`));
    } finally {
      await api.close();
    }
  });
});
