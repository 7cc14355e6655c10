// bench:controller's pure parts (issue 25 item 8): which API requests are LISTs and which WATCHes,
// and detection-to-decision latency attributed from the controller's Events, log and Leases.
import { expect } from "chai";
import {
  attributeDecisions,
  latencyStats,
  logMarks,
  summarizeDecisions,
  type LostNode,
  type ReceivedEvent,
} from "../../bench/decisions.js";
import { requestKind } from "../../bench/request-counter.js";
import { measurementsPage } from "../../lib/report/measurements.js";
import { expectIncludes } from "../support/assertions.js";

describe("bench:controller request kinds", () => {
  it("tells a WATCH, a LIST of a collection, a GET of one object and a write apart", () => {
    expect(requestKind("GET", "/api/v1/nodes?watch=true&resourceVersion=5")).to.equal("WATCH");
    expect(requestKind("GET", "/api/v1/nodes?limit=500")).to.equal("LIST");
    expect(requestKind("GET", "/api/v1/nodes/worker-1")).to.equal("GET");
    expect(requestKind("GET", "/api/v1/namespaces")).to.equal("LIST");
    expect(requestKind("GET", "/api/v1/namespaces/default")).to.equal("GET");
    expect(requestKind("GET", "/api/v1/namespaces/default/pods")).to.equal("LIST");
    expect(requestKind("GET", "/api/v1/namespaces/default/pods/p-1")).to.equal("GET");
    expect(requestKind("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases")).to.equal(
      "LIST",
    );
    expect(requestKind("GET", "/apis/rekindle.dev/v1alpha1/nodefences")).to.equal("LIST");
    expect(requestKind("GET", "/apis/rekindle.dev/v1alpha1/nodefences/worker-1")).to.equal("GET");
    expect(requestKind("PATCH", "/api/v1/nodes/worker-1")).to.equal("WRITE");
    expect(requestKind("POST", "/api/v1/namespaces/default/events")).to.equal("WRITE");
  });
});

describe("bench:controller decision latency", () => {
  const rules = { unhealthyAfterMs: 20_000, checkIntervalMs: 1000, powerLossNoticeMs: 800 };
  // Renewed at 0 (every 10 s), stopped at 4 s.
  const lost = (node: string): LostNode => ({
    node,
    stoppedAtMs: 4000,
    lastRenewalMs: 0,
    renewIntervalMs: 10_000,
  });
  const event = (node: string, reason: string, receivedAtMs: number, message = ""): ReceivedEvent => ({
    node,
    reason,
    message,
    receivedAtMs,
  });

  it("takes the first deciding Event after the stop, past the missed-renewal time for a node read off", () => {
    const decisions = attributeDecisions(
      [lost("w1")],
      [
        event("w1", "FenceStarted", 500), // Before the stop: an earlier incident's.
        event("w1", "NodeRecovered", 5000), // Not a decision.
        event("w1", "FenceStarted", 13_700, "fencing w1 with driver sim"),
        event(
          "w1",
          "NodeUnhealthy",
          13_600,
          "w1 is lost: Lease not renewed for 13s and sim reports its power off",
        ),
      ],
      rules,
    );
    expect(decisions).to.deep.equal([
      {
        node: "w1",
        reason: "NodeUnhealthy",
        kind: "fence",
        poweredOff: true,
        rule: "missed-renewal-read",
        fromRenewalMs: 13_600,
        // 10 s interval + max(1 s, 2 checks).
        thresholdMs: 12_000,
        afterThresholdMs: 1600,
        fromStopMs: 9600,
      },
    ]);
  });

  it("counts a hold as a decision, past unhealthyAfter when no power read said off", () => {
    const [decision] = attributeDecisions(
      [lost("w2")],
      [event("w2", "FenceHeldCorrelatedSilence", 20_400, "not fencing w2 (Lease not renewed for 20s): held")],
      rules,
    );
    expect(decision).to.include({
      kind: "hold",
      poweredOff: false,
      rule: "unhealthy-after",
      thresholdMs: 20_000,
      afterThresholdMs: 400,
    });
  });

  it("adds the controller's own log marks (read off, decided) after the stop", () => {
    const marks = logMarks([
      { atMs: 1000, message: "w1 holds 5 pods (a/b): fencing it releases them" }, // Before the stop.
      {
        atMs: 12_500,
        message:
          "w1 missed 1 Lease renewal(s) and sim reports its power off: lost now, without waiting for unhealthyAfter",
      },
      { atMs: 13_500, message: "w1 holds 5 pods (a/b): fencing it releases them" },
      { atMs: 13_510, message: "holds w2: not fencing w2 (…): 2 of 2 nodes in zone zone-a unhealthy" },
      {
        atMs: 13_520,
        message:
          "w3 lost (Lease not renewed for 21s), but it holds no running pods and no attached volumes: not fencing",
      },
      { atMs: 13_530, message: "reconcile failed (retrying): HTTP 429" },
    ]);
    expect(marks.map((m) => `${m.node} ${m.mark}`)).to.deep.equal([
      "w1 decided",
      "w1 read-off",
      "w1 decided",
      "w2 decided",
      "w3 decided",
    ]);
    const [decision] = attributeDecisions(
      [lost("w1")],
      [event("w1", "NodeUnhealthy", 13_600, "w1 is lost: … and sim reports its power off")],
      rules,
      marks,
    );
    expect(decision).to.include({
      rule: "missed-renewal-read",
      readOffFromRenewalMs: 12_500,
      decidedInProcessFromRenewalMs: 13_500,
      decidedInProcessAfterThresholdMs: 1500,
      eventAfterDecidedMs: 100,
    });
  });

  it("times a node read off on a power-loss notice from the notice: the stop plus the driver's delay", () => {
    const marks = logMarks([
      {
        atMs: 5_000,
        message:
          "w1 had a power-loss notice (0 Lease renewal(s) missed) and sim reports its power off: lost now, without waiting for unhealthyAfter",
      },
      { atMs: 5_100, message: "holds w1: not fencing w1 (…): 2 of 2 nodes in zone zone-a unhealthy" },
    ]);
    expect(marks.map((m) => `${m.node} ${m.mark}`)).to.deep.equal(["w1 notice-read-off", "w1 decided"]);
    const held = [
      event("w1", "FenceGuardHeld", 6_000, "not fencing w1 (… and sim reports its power off): held"),
    ];
    const [decision] = attributeDecisions([lost("w1")], held, rules, marks);
    // Stopped and recorded at 4 s, noticed at 4.8 s: decided 300 ms after, its Event 900 ms after that.
    expect(decision).to.include({
      rule: "power-loss-notice",
      thresholdMs: 4_800,
      afterThresholdMs: 1_200,
      readOffFromRenewalMs: 5_000,
      decidedInProcessAfterThresholdMs: 300,
      eventAfterDecidedMs: 900,
    });
    // Stopped at 4 s in a batch recorded at 5 s: its notice could come only at 5.8 s.
    const [batched] = attributeDecisions([{ ...lost("w1"), recordedAtMs: 5_000 }], held, rules, marks);
    expect(batched).to.include({ thresholdMs: 5_800, afterThresholdMs: 200 });
    // Read off on a notice first, at a missed renewal after (a second read): the first decided.
    const noticeFirst = logMarks([
      {
        atMs: 5_000,
        message: "w1 had a power-loss notice (0 Lease renewal(s) missed) and sim reports its power off",
      },
      { atMs: 5_200, message: "w1 missed 1 Lease renewal(s) and sim reports its power off: lost now" },
    ]);
    const [first] = attributeDecisions([lost("w1")], held, rules, noticeFirst);
    expect(first).to.include({ rule: "power-loss-notice", readOffFromRenewalMs: 5_000 });
    const summary = summarizeDecisions([lost("w1")], [decision!]);
    expect(summary.byRule).to.deep.equal({ "power-loss-notice": 1 });
    expect(summary.decidedInProcessAfterThresholdMs).to.deep.equal({ n: 1, p50: 300, p99: 300, max: 300 });
  });

  it("summarizes with nearest-rank p50 and p99, and names the nodes never decided", () => {
    expect(latencyStats([])).to.equal(undefined);
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(latencyStats(values)).to.deep.equal({ n: 100, p50: 50, p99: 99, max: 100 });
    const decisions = attributeDecisions(
      [lost("w1"), lost("w2")],
      [event("w1", "FenceGuardHeld", 21_000)],
      rules,
    );
    const summary = summarizeDecisions([lost("w1"), lost("w2")], decisions);
    expect(summary).to.include({ lost: 2, decided: 1, poweredOff: 0 });
    expect(summary.undecided).to.deep.equal(["w2"]);
    expect(summary.byReason).to.deep.equal({ FenceGuardHeld: 1 });
    expect(summary.afterThresholdMs).to.deep.equal({ n: 1, p50: 1000, p99: 1000, max: 1000 });
  });
});

describe("bench:controller on the measurements page", () => {
  it("renders the controller at rest and each incident's decision latency", () => {
    const content = {
      command: "npx tsx bench/controller.ts --workers 100",
      date: "2026-11-25",
      gitSha: "0123456789abcdef0123456789abcdef01234567",
      machine: { cores: 2, memoryGiB: 24, node: "v20.20.2" },
      runs: { rest: 1, singleLoss: 3, zoneOutage: 1 },
      workers: 100,
      podsPerNode: 20,
      rest: {
        cpuPercentOfOneCore: 1.5,
        rssMB: 170,
        rssBeforeControllerMB: 160,
        heapUsedBeforeControllerMB: 48,
        afterGc: { rssMB: 165, heapUsedMB: 60 },
        requestsPerSecond: { WATCH: 0.4, LIST: 0, GET: 0, WRITE: 0 },
        bytesPerSecond: 4000,
      },
      singleLoss: {
        summary: {
          lost: 3,
          byReason: { NodeUnhealthy: 3 },
          fromRenewalMs: { n: 3, p50: 13_200, p99: 13_700, max: 13_700 },
          afterThresholdMs: { n: 3, p50: 1200, p99: 1700, max: 1700 },
        },
      },
    };
    const page = measurementsPage([{ name: "controller-100w-2026-11-25.json", content }]);
    expectIncludes(page, [
      "- runs: rest 1, singleLoss 3, zoneOutage 1",
      "| at rest: CPU (% of one core) | 1.5 |",
      "| at rest: requests per second | WATCH 0.4, LIST 0, GET 0, WRITE 0 |",
      "| one node lost (3 nodes): decision after the rule's threshold, p50 / p99 | 1200 / 1700 ms (n 3) |",
    ]);
    expect(page).not.to.include("zone outage (");
  });
});
