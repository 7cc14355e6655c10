import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import type { NodeFence } from "../../lib/controller/fence-state.js";
import { assessNodes, guardNodes, planNode } from "../../lib/controller/plan.js";
import type { Snapshot } from "../../lib/controller/snapshot.js";

const T = Date.parse("2026-01-01T00:00:00Z");

function node(name: string, zone: string): k8s.V1Node {
  return {
    metadata: { name, labels: { "topology.kubernetes.io/zone": zone } },
    status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: new Date(T - 600_000) }] },
  };
}

function lease(name: string, renewed: number): k8s.V1Lease {
  return { metadata: { name }, spec: { renewTime: new Date(renewed), leaseDurationSeconds: 40 } };
}

/** Three workers in three zones; `renewed` overrides a node's last Lease renewal (default 2 s ago). */
function snapshot(renewed: Record<string, number> = {}, extra: Partial<Snapshot> = {}): Snapshot {
  const names = ["a", "b", "c"];
  return {
    nodes: names.map((n, i) => node(n, `z${i}`)),
    leases: new Map(names.map((n) => [n, lease(n, renewed[n] ?? T - 2_000)])),
    fences: new Map(),
    paused: false,
    ...extra,
  };
}

function plan(name: string, s: Snapshot) {
  const health = assessNodes(s, T, 20_000);
  return planNode(name, s, health, guardNodes(s, health, "rekindle.dev/exclude"), { maxUnhealthy: "40%" });
}

describe("controller: plan of a pass", function () {
  it("a healthy node needs nothing", function () {
    expect(plan("a", snapshot())).to.deep.equal({ kind: "none", healthy: true });
  });

  it("a lost node the guard allows is to be fenced, with the reason it is lost", function () {
    const p = plan("a", snapshot({ a: T - 30_000 }));
    expect(p).to.deep.equal({ kind: "fence", lostBecause: "Lease not renewed for 30s", previous: undefined });
  });

  it("a lost node waits for a peer that went silent with it", function () {
    expect(plan("a", snapshot({ a: T - 21_000, b: T - 12_000 }))).to.deep.equal({
      kind: "wait-for-peers",
      waiting: ["b"],
    });
  });

  it("a lost node is held while the controller is paused", function () {
    const p = plan("a", snapshot({ a: T - 30_000 }, { paused: true }));
    expect(p.kind).to.equal("hold");
    expect(p.kind === "hold" && p.reason).to.equal("Paused");
  });

  it("a fence under way is carried on, whatever the guard says", function () {
    const fence: NodeFence = {
      apiVersion: "rekindle.dev/v1alpha1",
      kind: "NodeFence",
      metadata: { name: "a" },
      spec: { node: "a" },
      status: { step: "taint", phase: "done", retries: 0 },
    };
    const p = plan("a", snapshot({ a: T - 30_000 }, { paused: true, fences: new Map([["a", fence]]) }));
    expect(p).to.deep.equal({ kind: "progress", fence, nodeHealthy: false });
  });
});
