// The rails for faults on a cluster rekindle did not create: --allow-faults with nodes chosen by
// selector or name, never a control-plane node, at most N; the scenarios' target list and the fault
// layer both keep to them; a run does not start while another run's fault is live; the preflight
// says what, where and until when. Against a fake API server and a fake agent (unit tests only).
import { expect } from "chai";
import { ExistingCluster } from "../../lib/cluster/existing/cluster.js";
import { guardedNodeFaults } from "../../lib/cluster/existing/rails.js";
import {
  checkFaultDeadline,
  checkRailsRequest,
  resolveFaultRails,
} from "../../lib/cluster/existing/rails.js";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import type {
  ClusterUnderTest,
  ExistingNodeFaults,
  FaultRails,
  NodeFaultOptions,
} from "../../lib/cluster/provider.js";
import type { k8s } from "../../lib/kube/client.js";
import { FaultInjector } from "../../lib/fault/injector.js";
import { reapFaults } from "../../lib/fault/reaper.js";
import { reapBeforeRun } from "../../lib/run/reap-first.js";
import { faultPreflightLines } from "../../lib/run/fault-preflight.js";
import type { ScenarioGroup } from "../../lib/run/suite.js";
import type { ScenarioDefinition } from "../../lib/scenario/harness.js";
import { silentProgress } from "../../lib/util/progress.js";
import { rekindleRejection, rekindleThrow } from "../support/assertions.js";
import { list, startFakeApiServer, type FakeApiServer } from "../support/fake-apiserver.js";
import { FakePartition, MemoryJournal } from "../support/fake-fault.js";

function node(name: string, labels: Record<string, string> = {}): k8s.V1Node {
  return { metadata: { name, labels } };
}

const NODES = [
  node("cp-1", { "node-role.kubernetes.io/control-plane": "" }),
  node("worker-1", { pool: "chaos" }),
  node("worker-2", { pool: "chaos" }),
  node("worker-3", { pool: "prod" }),
];

/** A fake listNode that understands k=v selectors (all this test needs). */
function listNodes(labelSelector?: string): Promise<k8s.V1Node[]> {
  if (labelSelector === undefined) return Promise.resolve(NODES);
  const pairs = labelSelector.split(",").map((p) => p.split("="));
  return Promise.resolve(
    NODES.filter((n) => pairs.every(([k, v]) => (n.metadata?.labels ?? {})[k ?? ""] === v)),
  );
}

describe("existing cluster fault rails", () => {
  describe("the flags", () => {
    it("refuses a node choice without --allow-faults, and --allow-faults without a node choice", () => {
      expect(
        rekindleThrow(() => {
          checkRailsRequest({ allowFaults: false, nodes: ["a"] });
        }).message,
      ).to.include("need --allow-faults");
      const bare = rekindleThrow(() => {
        checkRailsRequest({ allowFaults: true });
      });
      expect(bare.code).to.equal("INVALID_INPUT");
      expect(bare.hint).to.include("--node-selector k=v or --nodes a,b");
    });

    it("refuses a selector that is not k=v and a maximum of 0", () => {
      expect(
        rekindleThrow(() => {
          checkRailsRequest({ allowFaults: true, selector: "pool" });
        }).code,
      ).to.equal("INVALID_INPUT");
      expect(
        rekindleThrow(() => {
          checkRailsRequest({ allowFaults: true, nodes: ["a"], maxNodes: 0 });
        }).message,
      ).to.include("--max-faulted-nodes");
    });
  });

  describe("the fault deadline (--fault-deadline)", () => {
    it("refuses one too short for the fault under the profile, or longer than an hour", () => {
      // default: 50 s grace + 300 s toleration + 1 min = 410 s.
      const short = rekindleThrow(() => {
        checkFaultDeadline(300_000, TIMING_PROFILES.default);
      });
      expect(short.code).to.equal("INVALID_INPUT");
      expect(short.message).to.equal(
        "--fault-deadline 300s is too short for the fault; valid: from 410s to 3600s",
      );
      expect(
        rekindleThrow(() => {
          checkFaultDeadline(3_700_000, TIMING_PROFILES.default);
        }).message,
      ).to.include("longer than an hour");
      checkFaultDeadline(410_000, TIMING_PROFILES.default);
      // fast: 10 s + 5 s + 1 min.
      checkFaultDeadline(75_000, TIMING_PROFILES.fast);
    });

    it("is the deadline of a fault with no duration of its own; one with a duration keeps its own", async () => {
      const rails: FaultRails = {
        allowedNodes: ["w"],
        maxNodes: 1,
        chosenBy: "--nodes w",
        deadlineMs: 600_000,
      };
      const injector = new FaultInjector({
        capabilities: { partition: new FakePartition() },
        runId: "r",
        undo: { registerUndo: () => undefined },
        rails,
        now: () => 0,
      });
      const open = await injector.begin({ action: { kind: "partition" } });
      expect(open.deadline.getTime()).to.equal(600_000);
      const timed = await injector.begin({ action: { kind: "partition" }, durationMs: 20_000 });
      expect(timed.deadline.getTime()).to.equal(80_000);
      await open.revert();
      await timed.revert();
    });
  });

  describe("choosing the nodes", () => {
    it("takes the nodes a selector matches, up to the maximum", async () => {
      const rails = await resolveFaultRails(
        { allowFaults: true, selector: "pool=chaos", maxNodes: 2 },
        listNodes,
      );
      expect(rails).to.deep.equal({
        allowedNodes: ["worker-1", "worker-2"],
        maxNodes: 2,
        chosenBy: "--node-selector pool=chaos",
      });
    });

    it("refuses more nodes than --max-faulted-nodes (default 1), naming them", async () => {
      const error = await rekindleRejection(
        resolveFaultRails({ allowFaults: true, selector: "pool=chaos" }, listNodes),
      );
      expect(error.code).to.equal("INVALID_INPUT");
      expect(error.message).to.include("2 nodes (worker-1, worker-2), more than --max-faulted-nodes 1");
    });

    it("refuses a selector that matches nothing", async () => {
      const error = await rekindleRejection(
        resolveFaultRails({ allowFaults: true, selector: "pool=none" }, listNodes),
      );
      expect(error.message).to.equal("--node-selector pool=none matches no node of this cluster");
    });

    it("refuses a control-plane node, by name or by selector", async () => {
      const named = await rekindleRejection(
        resolveFaultRails({ allowFaults: true, nodes: ["cp-1"] }, listNodes),
      );
      expect(named.message).to.include("control-plane node(s) cp-1");
      const selected = await rekindleRejection(
        resolveFaultRails(
          { allowFaults: true, selector: "node-role.kubernetes.io/control-plane=" },
          listNodes,
        ),
      );
      expect(selected.message).to.include("never faults a control-plane node");
    });

    it("refuses a name the cluster does not have, listing the workers it has", async () => {
      const error = await rekindleRejection(
        resolveFaultRails({ allowFaults: true, nodes: ["worker-9"] }, listNodes),
      );
      expect(error.message).to.include('"worker-9"');
      expect(error.message).to.include("worker-1, worker-2, worker-3");
      expect(error.message).not.to.include("cp-1");
    });
  });

  describe("the cluster and the fault layer", () => {
    let api: FakeApiServer;
    before(async () => {
      api = await startFakeApiServer({ "GET /api/v1/nodes": () => list("NodeList", NODES) });
    });
    after(async () => {
      await api.close();
    });

    function fakeAgent(log: string[]): ExistingNodeFaults {
      // Logs each call, and the deadline when one is handed down (the agent arms its switch with it).
      const say =
        (what: string) =>
        (n: string, ...rest: unknown[]) => {
          const deadline = rest.find(
            (r): r is NodeFaultOptions => typeof r === "object" && r !== null,
          )?.deadline;
          log.push(`${what} ${n}${deadline ? ` until ${deadline.toISOString()}` : ""}`);
          return Promise.resolve();
        };
      return {
        lifecycle: { stopNode: say("stop"), startNode: say("start") },
        partition: { partitionNode: say("partition"), healNode: say("heal") },
        pressure: { applyPressure: say("fill"), relievePressure: say("relieve") },
      };
    }

    it("keeps every node fault off without --allow-faults, agent or not", async () => {
      const cluster = await ExistingCluster.open({
        kubeconfig: api.kubeconfigPath,
        nodeFaults: fakeAgent([]),
      });
      expect(cluster.capabilities).to.deep.equal({});
      expect(cluster.unsupported.partition).to.include("--allow-faults");
      expect(await cluster.workerNodes()).to.deep.equal(["worker-1", "worker-2", "worker-3"]);
    });

    it("says the agent is needed when faults are allowed without it, or without a way to journal them", async () => {
      const cluster = await ExistingCluster.open({
        kubeconfig: api.kubeconfigPath,
        rails: { allowFaults: true, nodes: ["worker-2"] },
      });
      expect(cluster.capabilities).to.deep.equal({});
      expect(cluster.unsupported.lifecycle).to.include("rekindle agent install");
      const noLocator = await ExistingCluster.open({
        kubeconfig: api.kubeconfigPath,
        rails: { allowFaults: true, nodes: ["worker-2"] },
        nodeFaults: fakeAgent([]),
      });
      expect(noLocator.capabilities).to.deep.equal({});
    });

    it("offers the agent's faults on the allowed nodes only: workerNodes and the capabilities both", async () => {
      const log: string[] = [];
      const cluster = await ExistingCluster.open({
        kubeconfig: api.kubeconfigPath,
        rails: { allowFaults: true, nodes: ["worker-2"] },
        nodeFaults: fakeAgent(log),
        // The agent's locator (its own kind comes with lib/agent/); a fault needs one to be journalled.
        faultLocator: { provider: "sim", root: "/agent" },
      });
      expect(await cluster.workerNodes()).to.deep.equal(["worker-2"]);
      expect(cluster.unsupported.lifecycle).to.equal(undefined);
      expect(cluster.unsupported["controller-manager-flags"]).to.be.a("string");
      const deadline = new Date("2026-11-24T12:00:00.000Z");
      await cluster.capabilities.partition?.partitionNode("worker-2", { deadline });
      const error = await rekindleRejection(
        cluster.capabilities.lifecycle?.stopNode("worker-1") ?? Promise.resolve(),
      );
      expect(error.message).to.include(
        "node worker-1 is not among the nodes faults are allowed on (worker-2",
      );
      expect(log).to.deep.equal(["partition worker-2 until 2026-11-24T12:00:00.000Z"]);
    });

    it("hands the fault handle's deadline on to the agent (its dead-man's switch reverts then)", async () => {
      const seen: (string | undefined)[] = [];
      const remember = (_n: string, o?: NodeFaultOptions) => {
        seen.push(o?.deadline?.toISOString());
        return Promise.resolve();
      };
      const rails: FaultRails = { allowedNodes: ["worker-2"], maxNodes: 1, chosenBy: "--nodes worker-2" };
      const guarded = guardedNodeFaults(
        {
          lifecycle: { stopNode: remember, startNode: (n) => remember(n) },
          partition: { partitionNode: remember, healNode: remember },
          pressure: {
            applyPressure: (n, _k, o) => remember(n, o),
            relievePressure: (n) => remember(n),
          },
        },
        rails,
      );
      const deadline = new Date("2026-11-24T12:01:15Z");
      await guarded.lifecycle?.stopNode("worker-2", { deadline });
      await guarded.partition?.partitionNode("worker-2", { deadline });
      await guarded.pressure?.applyPressure("worker-2", "memory", { deadline });
      expect(seen).to.deep.equal(Array(3).fill(deadline.toISOString()));
    });

    it("the fault layer refuses a node outside the rails before any side effect, and leaves no record", async () => {
      const partition = new FakePartition();
      const journal = new MemoryJournal();
      const rails: FaultRails = { allowedNodes: ["worker-2"], maxNodes: 1, chosenBy: "--nodes worker-2" };
      const undos: (() => Promise<void>)[] = [];
      const injector = new FaultInjector({
        capabilities: { partition },
        runId: "r1",
        undo: { registerUndo: (_name, run) => undos.push(run) },
        journal,
        locator: { provider: "sim", root: "/x" },
        rails,
      });
      const error = await rekindleRejection(
        injector.inject({ action: { kind: "partition" }, nodes: ["worker-3"] }),
      );
      expect(error.message).to.include("node worker-3 is not among");
      expect(partition.log).to.deep.equal([]);
      expect(journal.records.size).to.equal(0);
      const two = await rekindleRejection(
        injector
          .inject({ action: { kind: "partition" }, nodes: ["worker-2"] })
          .then(() => injector.inject({ action: { kind: "partition" }, nodes: ["worker-1"] })),
      );
      expect(two.message).to.include("worker-1");
    });
  });

  describe("another run's live fault", () => {
    it("stops the run, saying whose and until when, for a verb's fault before its deadline", async () => {
      const journal = new MemoryJournal();
      await journal.write({
        id: "fault-verb-1-abcdef",
        runId: "node-verb-1",
        action: { kind: "partition" },
        nodes: [{ name: "worker-2", state: "applied", at: "2026-11-24T10:00:00.000Z" }],
        appliedAt: "2026-11-24T10:00:00.000Z",
        deadline: "2999-01-01T00:00:00.000Z",
        locator: { provider: "sim", root: "/nonexistent" },
        holder: { host: "elsewhere", pid: 1, command: "rekindle node partition" },
      });
      const report = await reapFaults({ journal });
      expect(report.entries.map((e) => e.outcome)).to.deep.equal(["held"]);
      const error = await rekindleRejection(reapBeforeRun({} as ClusterUnderTest, silentProgress, journal));
      expect(error.code).to.equal("HARNESS_FAILED");
      expect(error.message).to.include("due by 2999-01-01T00:00:00.000Z");
      expect(error.message).to.include("partition of worker-2 (run node-verb-1");
      expect(error.message).to.include("held by rekindle node partition on elsewhere");
      expect(journal.records.size).to.equal(1);
    });

    it("refuses to fault an existing cluster whose journal cannot be read", async () => {
      const rails: FaultRails = { allowedNodes: ["w"], maxNodes: 1, chosenBy: "--nodes w" };
      const error = await rekindleRejection(
        reapBeforeRun({ faultRails: rails } as ClusterUnderTest, silentProgress, {
          write: () => Promise.resolve(),
          remove: () => Promise.resolve(),
          list: () => Promise.reject(new Error("configmaps is forbidden")),
        }),
      );
      expect(error.message).to.include("faults are not started without it");
    });
  });

  it("the preflight names the nodes, each faulting scenario's faults and the latest deadline", () => {
    const rails: FaultRails = { allowedNodes: ["worker-2"], maxNodes: 1, chosenBy: "--nodes worker-2" };
    const cluster = {
      description: "existing cluster, context c (https://x)",
      provider: "existing",
      faultRails: rails,
      capabilities: { partition: new FakePartition() },
      unsupported: { lifecycle: "no agent" },
    } as unknown as ClusterUnderTest;
    const scenario = (id: string, requires: string[]) => ({
      definition: { id, title: id, requires } as unknown as ScenarioDefinition,
    });
    const groups: ScenarioGroup[] = [
      {
        name: "g",
        file: "f",
        scenarios: [
          scenario("partition/heal", ["partition"]),
          scenario("node-loss/x", ["lifecycle"]),
          scenario("preflight/read", []),
        ],
      },
    ];
    const lines = faultPreflightLines(cluster, groups, { now: Date.parse("2026-11-24T10:00:00Z") });
    const text = lines.join("\n");
    expect(text).to.include("nodes:     worker-2 (chosen by --nodes worker-2); at most 1 at once");
    expect(text).to.include("partition/heal: partition (the node's traffic to the API server dropped");
    expect(text).to.include("skipped:   node-loss/x");
    expect(text).not.to.include("preflight/read");
    expect(text).to.include("by 2026-11-24T11:01:00.000Z at the latest");
    expect(faultPreflightLines({ ...cluster, faultRails: undefined }, groups)).to.deep.equal([]);
  });
});
