import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import { isRecordedMilestoneName } from "../../lib/observe/milestone-names.js";
import { TimelineRecorder } from "../../lib/observe/recorder.js";
import { TransitionLog } from "../../lib/observe/transition-log.js";
import type { Transition } from "../../lib/observe/types.js";
import { baseMilestones } from "../../lib/scenario/base-milestones.js";
import { type DeriveContext, type ScenarioDefinition } from "../../lib/scenario/harness.js";
import { ScenarioTimeline } from "../../lib/scenario/scenario-timeline.js";
import { waitUntil } from "../../lib/util/time.js";
import { fastTimelineInputs } from "../support/timeline-inputs.js";

const inputs = fastTimelineInputs();

const definition: ScenarioDefinition = {
  id: "test/x",
  title: "x",
  requires: [],
  expected: () => [],
  workloads: () => [],
  run: () => Promise.resolve(),
};

const FAULT = 100_000;

function ready(node: string, status: string, atMs: number, from = "True"): Transition {
  return {
    name: "node-condition",
    atMs,
    node,
    subject: { kind: "Node", name: node },
    detail: { type: "Ready", status, from, reason: "" },
    source: "watch",
  };
}

function renewal(node: string, atMs: number): Transition {
  return { name: "lease-renewed", atMs, node, subject: { kind: "Lease", name: node }, source: "watch" };
}

function taint(node: string, atMs: number): Transition {
  return {
    name: "taint-added",
    atMs,
    node,
    subject: { kind: "Node", name: node },
    detail: { key: "node.kubernetes.io/unreachable", effect: "NoExecute" },
    source: "watch",
  };
}

const context = (faultNodes: string[]): DeriveContext => ({
  faultAtMs: FAULT,
  faultNodes,
  namespace: "ns",
  inputs,
});

describe("milestones of every lost node", function () {
  const transitions = [
    renewal("w1", FAULT - 4_000),
    renewal("w2", FAULT - 2_000),
    ready("w2", "Unknown", FAULT + 9_000),
    ready("w1", "Unknown", FAULT + 11_000),
    taint("w2", FAULT + 9_500),
    taint("w1", FAULT + 11_500),
    ready("w2", "True", FAULT + 30_000, "Unknown"),
  ];

  it("keeps the unqualified names as they were: the first node's renewal, the first of any node's Ready and taints", function () {
    const names = (ms: { name: string; atMs: number }[]) =>
      Object.fromEntries(ms.filter((m) => !m.name.includes("@")).map((m) => [m.name, m.atMs]));
    const one = names(baseMilestones(definition, transitions, context(["w1"])));
    const two = names(baseMilestones(definition, transitions, context(["w1", "w2"])));
    expect(one).to.deep.include({ "last-lease-renewal": -4_000, "node-ready-unknown": 11_000 });
    expect(two).to.deep.include({
      "last-lease-renewal": -4_000,
      "node-ready-unknown": 9_000,
      "taint-added:node.kubernetes.io/unreachable": 9_500,
      "node-ready-again": 30_000,
    });
  });

  it("adds each fault node's own, qualified <name>@<node>, only when the fault hit several", function () {
    expect(
      baseMilestones(definition, transitions, context(["w1"])).some((m) => m.name.includes("@")),
    ).to.equal(false);
    const at = Object.fromEntries(
      baseMilestones(definition, TransitionLog.of(transitions), context(["w1", "w2"]))
        .filter((m) => m.name.includes("@"))
        .map((m) => [m.name, m.atMs]),
    );
    expect(at).to.deep.equal({
      "last-lease-renewal@w1": -4_000,
      "node-ready-unknown@w1": 11_000,
      "taint-added:node.kubernetes.io/unreachable@w1": 11_500,
      "last-lease-renewal@w2": -2_000,
      "node-ready-unknown@w2": 9_000,
      "taint-added:node.kubernetes.io/unreachable@w2": 9_500,
      "node-ready-again@w2": 30_000,
    });
  });

  it("names a node-qualified milestone as recordable, and nothing else after an @", function () {
    expect(isRecordedMilestoneName("node-ready-unknown@worker-2", [])).to.equal(true);
    expect(
      isRecordedMilestoneName("taint-added:node.kubernetes.io/out-of-service@sim-worker-12", []),
    ).to.equal(true);
    expect(isRecordedMilestoneName("fence:taint:done@w2", [])).to.equal(true);
    expect(isRecordedMilestoneName("event:NodeNotReady@w2", [])).to.equal(true);
    expect(isRecordedMilestoneName("fault-injected@w2", [])).to.equal(false);
    expect(isRecordedMilestoneName("web:recovered@w2", ["web"])).to.equal(false);
    expect(isRecordedMilestoneName("node-ready-unknown@Bad_Node", [])).to.equal(false);
  });
});

const nodeObject = (name: string, status: string): k8s.V1Node => ({
  metadata: { name, uid: `node-${name}` },
  status: { conditions: [{ type: "Ready", status }] },
});

describe("the timeline's milestones, cached and awaited", function () {
  function timeline() {
    const recorder = TimelineRecorder.offline({ countBackground: true });
    const t = new ScenarioTimeline(definition, "ns", inputs, undefined);
    t.recorder = recorder;
    return { recorder, t };
  }

  it("derives again only when the recorder stored something or the fault changed", function () {
    const { recorder, t } = timeline();
    expect(t.milestones()).to.deep.equal([]);
    t.faultStarts(["w1"]);
    t.milestones();
    t.milestones();
    expect(t.derivations).to.equal(1);
    // A background node's renewal is counted, not stored: nothing to derive again.
    recorder.observe(
      "Lease",
      "MODIFIED",
      { metadata: { name: "w9", uid: "l9" }, spec: { renewTime: new Date() } } as k8s.V1Lease,
      { metadata: { name: "w9", uid: "l9" }, spec: {} } as k8s.V1Lease,
    );
    t.milestones();
    expect(t.derivations).to.equal(1);
    recorder.observe("Node", "MODIFIED", nodeObject("w1", "Unknown"), nodeObject("w1", "True"));
    expect(t.milestones().map((m) => m.name)).to.include("node-ready-unknown");
    expect(t.derivations).to.equal(2);
  });

  it("gives a node's milestones its zone when the fault started, and counts the zones then", function () {
    const { recorder, t } = timeline();
    const zoned = (name: string, status: string, zone: string): k8s.V1Node => ({
      ...nodeObject(name, status),
      metadata: { name, uid: `node-${name}`, labels: { "topology.kubernetes.io/zone": zone } },
    });
    for (const [name, zone] of [
      ["w1", "zone-a"],
      ["w2", "zone-a"],
      ["w3", "zone-b"],
    ] as const)
      recorder.observe("Node", "ADDED", zoned(name, "True", zone), undefined, true);
    t.faultStarts(["w1", "w2"]);
    // Relabelled after the fault (a zone scenario's undo gives the labels back): the fault's zone stays.
    recorder.observe("Node", "MODIFIED", zoned("w1", "Unknown", "zone-x"), zoned("w1", "True", "zone-a"));
    recorder.observe("Node", "MODIFIED", zoned("w2", "Unknown", "zone-a"), zoned("w2", "True", "zone-a"));
    const zoneOf = (name: string) => t.milestones().find((m) => m.name === name)?.zone;
    expect(zoneOf("node-ready-unknown@w1")).to.equal("zone-a");
    expect(zoneOf("node-ready-unknown@w2")).to.equal("zone-a");
    expect(zoneOf("node-ready-unknown")).to.equal("zone-a");
    expect(zoneOf("fault-injected")).to.equal(undefined);
    expect(t.zoneSizes()).to.deep.equal({ "zone-a": 2, "zone-b": 1 });
    expect(recorder.zones().get("w1")).to.equal("zone-x");
  });

  it("wakes a waiter when the transition it waits for is stored", async function () {
    const { recorder, t } = timeline();
    t.faultStarts(["w1"]);
    const waiting = waitUntil(() => t.milestones().find((m) => m.name === "node-ready-unknown"), {
      what: "milestone node-ready-unknown",
      timeoutMs: 5_000,
      subscribe: (wake) => t.subscribe(wake),
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = t.derivations;
    recorder.observe("Node", "MODIFIED", nodeObject("w1", "Unknown"), nodeObject("w1", "True"));
    const found = await waiting;
    expect(found.node).to.equal("w1");
    expect(t.derivations).to.equal(before + 1);
  });
});
