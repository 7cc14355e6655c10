import { expect } from "chai";
import type { NodeFence } from "../../lib/controller/fence-state.js";
import { assessNodes, guardNodes, planNode } from "../../lib/controller/plan.js";
import type { Snapshot } from "../../lib/controller/snapshot.js";
import { nodeObject, observations, replay, snapshotAt, type ScriptedNode } from "../support/node-history.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const s = (seconds: number) => T0 + seconds * 1000;
const NOW = s(60);

/** Three workers in three zones renewing every 10 s (phases 0, 1, 6 s); `lastRenewal` stops one. */
function cluster(lastRenewal: Record<string, number> = {}, extra: Partial<Snapshot> = {}, now = NOW) {
  const nodes: ScriptedNode[] = ["a", "b", "c"].map((name, i) => ({
    name,
    zone: `z${i}`,
    phaseMs: [0, 1_000, 6_000][i] ?? 0,
    alive: (t: number) => lastRenewal[name] === undefined || t <= lastRenewal[name],
  }));
  const o = observations({ checkIntervalMs: 1_000 });
  replay(o, nodes, { from: s(0), to: now, tickMs: 500 });
  const snapshot: Snapshot = { ...snapshotAt(nodes, now, s(0)), fences: new Map(), paused: false, ...extra };
  return { o, snapshot };
}

function plan(
  name: string,
  lastRenewal: Record<string, number> = {},
  extra: Partial<Snapshot> = {},
  now = NOW,
) {
  const { o, snapshot } = cluster(lastRenewal, extra, now);
  const health = assessNodes(snapshot, o, now, 20_000);
  return planNode(name, snapshot, o, health, guardNodes(snapshot, health, "rekindle.dev/exclude"), {
    maxUnhealthy: "40%",
    checkIntervalMs: 1_000,
  });
}

function fence(
  status: NonNullable<NodeFence["status"]>,
  metadata: Partial<NodeFence["metadata"]> = {},
  nodeUID?: string,
): NodeFence {
  return {
    apiVersion: "rekindle.dev/v1alpha1",
    kind: "NodeFence",
    metadata: { name: "a", ...metadata },
    spec: { node: "a", ...(nodeUID === undefined ? {} : { nodeUID }) },
    status,
  };
}

describe("controller: plan of a pass", function () {
  it("a healthy node needs nothing", function () {
    expect(plan("a")).to.deep.equal({ kind: "none", healthy: true });
  });

  it("a lost node the guard allows is to be fenced, with the reason it is lost", function () {
    // a renewed last at 30 s; this controller saw it then, 30 s before now.
    const p = plan("a", { a: s(30) });
    expect(p).to.deep.equal({
      kind: "fence",
      lostBecause: "Lease not renewed for 30s",
      previous: undefined,
      rate: "primary",
    });
  });

  it("a lost node is held at once when a peer that went silent with it has missed a renewal", function () {
    // a renewed last at 30 s and b at 41 s: b stopped before a's next renewal was due (40 s, plus
    // a check interval), so the same event may have stopped both. At 60 s b is not judged lost yet
    // (19 s silent) but is past a renewal (12 s): counted as lost with a, two of three: held.
    const p = plan("a", { a: s(39), b: s(41) });
    expect(p.kind).to.equal("hold");
    expect(p.kind === "hold" && p.message).to.include("unhealthy, fencing or silent with a past a renewal");
    // Once both are judged lost, the guard decides the same way.
    expect(plan("a", { a: s(30), b: s(33) }).kind).to.equal("hold");
    // b renewed after a's next renewal was due: alive after a failed, not waited for.
    expect(plan("a", { a: s(39), b: s(53) }).kind).to.equal("fence");
  });

  it("a lost node waits for a peer whose renewal is due, until it renews or misses it", function () {
    // a renewed last at 40 s, b at 51 s (a's next renewal was due by 51 s). At 60.5 s a is lost
    // (20.5 s silent) and b's next renewal is due at 61 s: whether b failed with a is not known yet.
    expect(plan("a", { a: s(49), b: s(59) }, {}, s(60.5))).to.deep.equal({
      kind: "wait-for-peers",
      waiting: ["b"],
    });
    // b renews at 61 s: alive after a failed; a is fenced alone.
    expect(plan("a", { a: s(49) }, {}, s(61.5)).kind).to.equal("fence");
    // b does not: at 63.5 s it is 12.5 s silent, past a renewal, and counted as lost with a.
    expect(plan("a", { a: s(49), b: s(59) }, {}, s(63.5)).kind).to.equal("hold");
  });

  it("a lost node is held while the controller is paused", function () {
    const p = plan("a", { a: s(30) }, { paused: true });
    expect(p.kind).to.equal("hold");
    expect(p.kind === "hold" && p.reason).to.equal("Paused");
  });

  it("a fence under way is carried on, whatever the guard says", function () {
    const f = fence({ step: "taint", phase: "done", retries: 0 });
    const p = plan("a", { a: s(30) }, { paused: true, fences: new Map([["a", f]]) });
    expect(p).to.deep.equal({
      kind: "progress",
      fence: f,
      health: { state: "unhealthy", reason: "Lease not renewed for 30s" },
    });
  });

  it("a NodeFence deleted by hand is released, at any step", function () {
    const f = fence(
      { step: "cleanup", phase: "running", retries: 0 },
      { deletionTimestamp: new Date(NOW).toISOString() },
    );
    expect(plan("a", { a: s(30) }, { fences: new Map([["a", f]]) })).to.deep.equal({
      kind: "release",
      fence: f,
    });
  });

  it("a fence of an earlier Node object under the name is superseded, not carried on", function () {
    const f = fence({ step: "power-management", phase: "running", retries: 0 }, {}, "uid-of-the-old-node");
    expect(plan("a", { a: s(30) }, { fences: new Map([["a", f]]) })).to.deep.equal({
      kind: "supersede",
      fence: f,
    });
    // The same Node object: carried on.
    const own = fence(
      { step: "power-management", phase: "running", retries: 0 },
      {},
      nodeObject({ name: "a", alive: () => true }).metadata?.uid,
    );
    expect(plan("a", { a: s(30) }, { fences: new Map([["a", own]]) }).kind).to.equal("progress");
  });
});
