import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import { TimelineRecorder } from "../../lib/observe/recorder.js";
import { TransitionLog, fromTime, untilTime } from "../../lib/observe/transition-log.js";
import type { Transition } from "../../lib/observe/types.js";
import { RekindleError } from "../../lib/errors.js";
import { waitUntil } from "../../lib/util/time.js";

const t = (name: Transition["name"], atMs: number, node?: string, subject = "x"): Transition => ({
  name,
  atMs,
  subject: { kind: name === "lease-renewed" ? "Lease" : "Node", name: subject },
  ...(node ? { node } : {}),
  source: "watch",
});

describe("the transition log", function () {
  it("indexes by name, node, kind and object, each in time order", function () {
    const log = TransitionLog.of([
      t("lease-renewed", 1, "a", "a"),
      t("node-condition", 2, "a", "a"),
      t("lease-renewed", 3, "b", "b"),
    ]);
    expect(log.named("lease-renewed").map((x) => x.atMs)).to.deep.equal([1, 3]);
    expect(log.onNode("a").map((x) => x.name)).to.deep.equal(["lease-renewed", "node-condition"]);
    expect(log.ofKind("Node").map((x) => x.atMs)).to.deep.equal([2]);
    expect(log.ofObject("Lease", "b").map((x) => x.atMs)).to.deep.equal([3]);
    expect(log.onNode("nobody")).to.deep.equal([]);
  });

  it("puts a transition stored late at its time, after those of the same time, and moves its generation", function () {
    const log = TransitionLog.of([t("event", 10, "a"), t("event", 20, "a")]);
    const generation = log.generation;
    log.add(t("lease-renewed", 10, "a"));
    expect(log.all.map((x) => `${x.name}@${x.atMs}`)).to.deep.equal([
      "event@10",
      "lease-renewed@10",
      "event@20",
    ]);
    expect(log.onNode("a").map((x) => x.atMs)).to.deep.equal([10, 10, 20]);
    expect(log.generation).to.equal(generation + 1);
  });

  it("reads from and up to a time by binary search; until() is a view of the prefix", function () {
    const log = TransitionLog.of([1, 5, 5, 9].map((atMs) => t("event", atMs, "a")));
    expect(fromTime(log.all, 5).map((x) => x.atMs)).to.deep.equal([5, 5, 9]);
    expect(untilTime(log.all, 5).map((x) => x.atMs)).to.deep.equal([1, 5, 5]);
    expect(
      log
        .until(4)
        .named("event")
        .map((x) => x.atMs),
    ).to.deep.equal([1]);
    expect(log.until(4).onNode("a")).to.have.length(1);
  });

  it("tells listeners of each transition stored until they unsubscribe", function () {
    const log = new TransitionLog();
    const heard: number[] = [];
    const stop = log.subscribe((x) => heard.push(x.atMs));
    log.add(t("event", 1));
    stop();
    log.add(t("event", 2));
    expect(heard).to.deep.equal([1]);
  });
});

describe("waiting woken by events (waitUntil)", function () {
  function source() {
    const wakes = new Set<() => void>();
    return {
      subscribe: (wake: () => void) => {
        wakes.add(wake);
        return () => wakes.delete(wake);
      },
      fire: () => {
        for (const wake of wakes) wake();
      },
      get listeners() {
        return wakes.size;
      },
    };
  }

  it("resolves when a wake finds the value, and unsubscribes", async function () {
    const events = source();
    const box: { value?: string } = {};
    const waiting = waitUntil(() => box.value, { what: "x", timeoutMs: 5_000, subscribe: events.subscribe });
    expect(events.listeners).to.equal(1);
    box.value = "here";
    events.fire();
    expect(await waiting).to.equal("here");
    expect(events.listeners).to.equal(0);
  });

  it("does not check again without a wake (no polling)", async function () {
    const events = source();
    let checks = 0;
    const waiting = waitUntil(
      () => {
        checks += 1;
        return checks > 2 ? "done" : undefined;
      },
      { what: "x", timeoutMs: 5_000, subscribe: events.subscribe },
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(checks).to.equal(1);
    events.fire();
    events.fire(); // Two wakes in one turn of the event loop: one check.
    await new Promise((resolve) => setImmediate(resolve));
    expect(checks).to.equal(2);
    events.fire();
    expect(await waiting).to.equal("done");
  });

  it("times out naming what it waited for, reporting progress meanwhile", async function () {
    const events = source();
    const reports: number[] = [];
    const error = await waitUntil(() => undefined, {
      what: "milestone x",
      timeoutMs: 120,
      subscribe: events.subscribe,
      reportEveryMs: 50,
      onWait: (elapsed) => reports.push(elapsed),
    }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(RekindleError);
    expect((error as RekindleError).code).to.equal("TIMEOUT");
    expect((error as Error).message).to.include("milestone x");
    expect(reports.length).to.be.greaterThanOrEqual(1);
    expect(events.listeners).to.equal(0);
  });

  it("ends with ABORTED when its signal aborts, before or during the wait", async function () {
    const events = source();
    const controller = new AbortController();
    const waiting = waitUntil(() => undefined, {
      what: "x",
      timeoutMs: 5_000,
      subscribe: events.subscribe,
      signal: controller.signal,
    }).catch((e: unknown) => e);
    controller.abort();
    expect(((await waiting) as RekindleError).code).to.equal("ABORTED");
    const already = await waitUntil(() => undefined, {
      what: "x",
      timeoutMs: 5_000,
      subscribe: events.subscribe,
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect((already as RekindleError).code).to.equal("ABORTED");
    expect(events.listeners).to.equal(0);
  });

  it("ends with the error a check throws, and unsubscribes", async function () {
    const events = source();
    let calls = 0;
    const waiting = waitUntil(
      () => {
        calls += 1;
        if (calls > 1) throw new Error("undeclared milestone");
        return undefined;
      },
      { what: "x", timeoutMs: 5_000, subscribe: events.subscribe },
    ).catch((e: unknown) => e);
    events.fire();
    expect(((await waiting) as Error).message).to.equal("undeclared milestone");
    expect(events.listeners).to.equal(0);
  });

  it("checks again on its recheck interval for what nothing announces", async function () {
    let value: string | undefined;
    setTimeout(() => (value = "late"), 30);
    const got = await waitUntil(() => value, {
      what: "x",
      timeoutMs: 2_000,
      subscribe: () => () => undefined,
      recheckEveryMs: 20,
    });
    expect(got).to.equal("late");
  });
});

/** A Lease of `node` renewed at `second`. */
const lease = (node: string, second: number): k8s.V1Lease => ({
  metadata: { name: node, namespace: "kube-node-lease", uid: `lease-${node}` },
  spec: { holderIdentity: node, renewTime: new Date(Date.UTC(2026, 0, 1, 0, 0, second)) },
});

const nodeObject = (name: string, zone: string, ready = "True"): k8s.V1Node => ({
  metadata: { name, uid: `node-${name}`, labels: { "topology.kubernetes.io/zone": zone } },
  status: { conditions: [{ type: "Ready", status: ready }] },
});

/** A recorder fed by hand on a clock the test moves. */
function offline(countBackground: boolean | { recentMs: number } = true) {
  const clock = { now: 60_000 };
  const recorder = TimelineRecorder.offline({ countBackground, now: () => clock.now });
  const renew = (node: string, second: number) => {
    recorder.observe("Lease", "MODIFIED", lease(node, second), lease(node, second - 10));
  };
  return { recorder, clock, renew };
}

describe("the recorder", function () {
  it("waitFor resolves when a matching transition is stored, not before", async function () {
    const { recorder, renew } = offline(false);
    let resolved: Transition | undefined;
    const waiting = recorder
      .waitFor("b renews", (x) => x.name === "lease-renewed" && x.node === "b", 5_000)
      .then((x) => (resolved = x));
    renew("a", 10);
    await new Promise((resolve) => setImmediate(resolve));
    expect(resolved).to.equal(undefined);
    renew("b", 10);
    await waiting;
    expect(resolved?.node).to.equal("b");
  });

  it("waitFor finds a transition already stored, times out, and aborts", async function () {
    const { recorder, renew } = offline(false);
    renew("a", 10);
    expect((await recorder.waitFor("a", (x) => x.node === "a", 1_000)).node).to.equal("a");
    const timeout = await recorder.waitFor("z", (x) => x.node === "z", 50).catch((e: unknown) => e);
    expect((timeout as RekindleError).code).to.equal("TIMEOUT");
    const controller = new AbortController();
    const aborted = recorder
      .waitFor("z", (x) => x.node === "z", 5_000, controller.signal)
      .catch((e: unknown) => e);
    controller.abort();
    expect(((await aborted) as RekindleError).code).to.equal("ABORTED");
  });

  it("stores every renewal without countBackground", function () {
    const { recorder, renew } = offline(false);
    for (let s = 10; s <= 50; s += 10) renew("a", s);
    expect(recorder.transitions).to.have.length(5);
    expect(recorder.background()).to.equal(undefined);
  });

  it("counts the renewals of nodes nothing concerns, per zone and minute, and stores none of them", function () {
    const { recorder, clock, renew } = offline();
    recorder.observe("Node", "ADDED", nodeObject("a", "zone-a"), undefined, true);
    recorder.observe("Node", "ADDED", nodeObject("b", "zone-b"), undefined, true);
    const stored = recorder.transitions.length; // The initial list: node-added and Ready of each.
    for (let i = 0; i < 12; i++) {
      clock.now += 10_000;
      renew("a", 10 + i);
      renew("b", 10 + i);
    }
    // A status heartbeat: a Node update that changed nothing named.
    recorder.observe("Node", "MODIFIED", nodeObject("a", "zone-a"), nodeObject("a", "zone-a"));
    expect(recorder.transitions).to.have.length(stored);
    const counts = recorder.background();
    expect(counts?.nodes["a"]).to.deep.include({ zone: "zone-a", leaseRenewals: 12, nodeHeartbeats: 1 });
    expect(counts?.minutes.map((m) => [m.zone, m.minuteAtMs, m.leaseRenewals])).to.deep.equal([
      ["zone-a", 60_000, 5],
      ["zone-b", 60_000, 5],
      ["zone-a", 120_000, 6],
      ["zone-b", 120_000, 6],
      ["zone-a", 180_000, 1],
      ["zone-b", 180_000, 1],
    ]);
    expect(counts?.minutes.reduce((sum, m) => sum + m.nodeHeartbeats, 0)).to.equal(1);
  });

  it("stores the recent renewals of a node focused later (the fault's), in time order, and every later one", function () {
    const { recorder, clock, renew } = offline({ recentMs: 25_000 });
    for (let i = 0; i < 6; i++) {
      clock.now += 10_000;
      renew("a", 10 + i);
    }
    expect(recorder.transitions).to.have.length(0);
    recorder.focus(["a"]);
    // Kept: the renewals of the last 25 s before the latest (at 100 s, 110 s, 120 s).
    expect(recorder.transitions.map((x) => x.atMs)).to.deep.equal([100_000, 110_000, 120_000]);
    clock.now += 10_000;
    renew("a", 20);
    expect(recorder.transitions).to.have.length(4);
    expect(recorder.background()?.promoted).to.deep.equal(["a"]);
  });

  it("promotes a node that a scenario pod lands on, or that changes after the initial lists", function () {
    const { recorder, clock, renew } = offline();
    recorder.observe("Node", "ADDED", nodeObject("b", "zone-a"), undefined, true);
    for (const node of ["a", "b", "c"]) renew(node, 10);
    clock.now += 1_000;
    const pod: k8s.V1Pod = {
      metadata: { name: "web-1", namespace: "ns", uid: "p1", labels: { app: "web" } },
      spec: { nodeName: "a", containers: [] },
    };
    recorder.observe("Pod", "ADDED", pod, undefined, true);
    recorder.observe("Node", "MODIFIED", nodeObject("b", "zone-a", "Unknown"), nodeObject("b", "zone-a"));
    const renewed = recorder.transitions.filter((x) => x.name === "lease-renewed").map((x) => x.node);
    expect(renewed).to.deep.equal(["a", "b"]);
    // Before what promoted it: the renewal is at its own time, ahead of the pod and the condition.
    expect(
      recorder.transitions.findIndex((x) => x.node === "a" && x.name === "lease-renewed"),
    ).to.be.lessThan(recorder.transitions.findIndex((x) => x.name === "pod-created"));
    expect(recorder.background()?.nodes["c"]?.leaseRenewals).to.equal(1);
  });
});
