// Per-workload milestones of user workloads: pods matched by labels, volumes reached through
// their claims, a Service's EndpointSlices, evictions and split brain.
import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import { duplicateReady } from "../../lib/scenario/common.js";
import { isRecordedMilestoneName } from "../../lib/observe/milestone-names.js";
import { deriveNodeLossMilestones, type Milestone, type WorkloadRef } from "../../lib/observe/milestones.js";
import { transitionsOf } from "../../lib/observe/transitions.js";
import type { Transition } from "../../lib/observe/types.js";

const T0 = 1_000_000;
const LOST = "worker-1";

/** A transition `atMs` after the fault (negative: before). */
function at(
  atMs: number,
  name: Transition["name"],
  extra: Omit<Partial<Transition>, "name" | "atMs">,
): Transition {
  return { name, atMs: T0 + atMs, subject: { kind: "Pod", name: "x" }, source: "watch", ...extra };
}

/** One pod of a workload: its transitions carry its labels and claims, as the recorder's do. */
function podOf(uid: string, labels: Record<string, string>, claims: string[] = []) {
  return (atMs: number, name: Transition["name"], node?: string, detail: Record<string, string> = {}) =>
    at(atMs, name, {
      subject: { kind: "Pod", name: uid, namespace: "ns", uid },
      ...(node ? { node } : {}),
      detail: { app: labels["app"] ?? "", ...detail },
      pod: { labels, claims },
    });
}

const bound = (atMs: number, claim: string, volume: string) =>
  at(atMs, "pvc-bound", {
    subject: { kind: "PersistentVolumeClaim", name: claim, namespace: "ns", uid: `c-${claim}` },
    detail: { claim, volume },
  });

const va = (atMs: number, name: Transition["name"], node: string, volume: string) =>
  at(atMs, name, {
    subject: { kind: "VolumeAttachment", name: `va-${volume}-${node}` },
    node,
    detail: { volume },
  });

const slice = (atMs: number, sliceName: string, service: string, endpoints: string[]) =>
  at(atMs, "endpoints-changed", {
    subject: { kind: "EndpointSlice", name: sliceName, namespace: "ns", uid: sliceName },
    detail: { service, ready: String(endpoints.length), endpoints: endpoints.join(",") },
  });

function derive(transitions: Transition[], workloads: WorkloadRef[]): Milestone[] {
  return deriveNodeLossMilestones(transitions, { faultAtMs: T0, lostNode: LOST, workloads });
}

const atOf = (milestones: Milestone[], name: string) => milestones.find((m) => m.name === name)?.atMs;

describe("per-workload milestones", function () {
  describe("pods matched by matchLabels", function () {
    const pg = podOf("pg-0", { "app.kubernetes.io/name": "pg", role: "primary" });
    const replica = podOf("pg-1", { "app.kubernetes.io/name": "pg", role: "replica" });
    const pgNew = podOf("pg-0b", { "app.kubernetes.io/name": "pg", role: "primary" });
    const transitions = [
      pg(-5000, "pod-scheduled", LOST),
      replica(-5000, "pod-scheduled", LOST),
      pg(8000, "pod-deletion-requested", LOST),
      replica(7000, "pod-deletion-requested", LOST),
      pgNew(9000, "pod-created"),
      pgNew(9100, "pod-scheduled", "worker-2"),
      pgNew(10_000, "pod-ready", "worker-2"),
    ];

    it("counts a pod only when every label matches, whatever its app label", function () {
      const primary: WorkloadRef = {
        id: "db",
        namespace: "ns",
        matchLabels: { "app.kubernetes.io/name": "pg", role: "primary" },
      };
      const milestones = derive(transitions, [primary]);
      expect(atOf(milestones, "db:pod-deletion-requested")).to.equal(8000);
      expect(atOf(milestones, "db:recovered")).to.equal(10_000);
    });

    it("keeps the app label for the built-in fixtures, and another namespace matches nothing", function () {
      const web = podOf("web-1", { app: "web" });
      const byApp = derive(
        [web(-1, "pod-scheduled", LOST), web(500, "pod-deletion-requested", LOST)],
        [
          { id: "deployment", app: "web", namespace: "ns" },
          { id: "elsewhere", namespace: "other", matchLabels: { app: "web" } },
        ],
      );
      expect(atOf(byApp, "deployment:pod-deletion-requested")).to.equal(500);
      expect(byApp.some((m) => m.name.startsWith("elsewhere:"))).to.equal(false);
    });
  });

  describe("volumes keyed by workload", function () {
    const db = podOf("db-0", { app: "db" }, ["data-db-0"]);
    const cache = podOf("cache-0", { app: "cache" }, ["data-cache-0"]);
    const dbNew = podOf("db-0b", { app: "db" }, ["data-db-0"]);
    const transitions = [
      bound(-9000, "data-db-0", "pv-db"),
      bound(-9000, "data-cache-0", "pv-cache"),
      db(-5000, "pod-scheduled", LOST),
      cache(-5000, "pod-scheduled", LOST),
      va(-4000, "va-attached", LOST, "pv-db"),
      va(-4000, "va-attached", LOST, "pv-cache"),
      dbNew(20_000, "pod-created"),
      at(21_000, "event", {
        subject: { kind: "Event", name: "e", namespace: "ns" },
        detail: {
          reason: "FailedAttachVolume",
          message: 'Multi-Attach error for volume "pv-db" Volume is already exclusively attached to one node',
          involvedNamespace: "ns",
          involvedUid: "db-0b",
          involvedName: "db-0b",
        },
      }),
      va(30_000, "va-deletion-requested", LOST, "pv-cache"),
      va(31_000, "va-gone", LOST, "pv-cache"),
      va(40_000, "va-deletion-requested", LOST, "pv-db"),
      va(41_000, "va-gone", LOST, "pv-db"),
      va(43_000, "va-attached", "worker-2", "pv-db"),
    ];
    const workloads: WorkloadRef[] = [
      { id: "db", app: "db", namespace: "ns" },
      { id: "cache", app: "cache", namespace: "ns" },
    ];

    it("gives two StatefulSets with volumes each its own detach and re-attach", function () {
      const milestones = derive(transitions, workloads);
      expect(atOf(milestones, "db:va-detach-started")).to.equal(40_000);
      expect(atOf(milestones, "db:va-gone")).to.equal(41_000);
      expect(atOf(milestones, "db:va-attached-elsewhere")).to.equal(43_000);
      expect(atOf(milestones, "cache:va-detach-started")).to.equal(30_000);
      expect(atOf(milestones, "cache:va-gone")).to.equal(31_000);
      expect(atOf(milestones, "cache:va-attached-elsewhere")).to.equal(undefined);
    });

    it("puts a multi-attach refusal on the workload whose pod was refused", function () {
      const milestones = derive(transitions, workloads);
      expect(atOf(milestones, "db:multi-attach")).to.equal(21_000);
      expect(atOf(milestones, "cache:multi-attach")).to.equal(undefined);
    });

    it("leaves the global volume milestones as they were: the first volume on the lost node", function () {
      const milestones = derive(transitions, workloads);
      expect(atOf(milestones, "va-gone")).to.equal(31_000);
      expect(atOf(milestones, "multi-attach")).to.equal(21_000);
    });

    it("has none for a workload whose lost pods claim nothing", function () {
      const web = podOf("web-1", { app: "web" });
      const milestones = derive(
        [...transitions, web(-5000, "pod-scheduled", LOST)],
        [{ id: "web", app: "web", namespace: "ns" }],
      );
      expect(milestones.filter((m) => m.name.startsWith("web:va-"))).to.deep.equal([]);
    });
  });

  describe("serving: the Service's EndpointSlices", function () {
    const pods = ["p1", "p2", "p3"].map((uid) => podOf(uid, { app: "api" }));
    const readyBefore = pods.map((p, i) => p(-10_000, "pod-ready", i === 2 ? LOST : "worker-2"));
    const api: WorkloadRef = { id: "api", app: "api", namespace: "ns", service: "api" };

    it("is lost when one slice drops an endpoint, and serving once the union holds the wanted number again", function () {
      const milestones = derive(
        [
          ...readyBefore,
          slice(-9000, "api-a", "api", ["p1", "p2"]),
          slice(-9000, "api-b", "api", ["p3"]),
          // Another Service's slice changes nothing.
          slice(1000, "other-a", "other", []),
          slice(12_000, "api-b", "api", []),
          // The replacement lands in slice a: a slice update replaces a's list, b's stays empty.
          slice(20_000, "api-a", "api", ["p1", "p2"]),
          slice(25_000, "api-a", "api", ["p1", "p2", "p4"]),
        ],
        [api],
      );
      expect(atOf(milestones, "api:endpoints-lost")).to.equal(12_000);
      expect(atOf(milestones, "api:serving")).to.equal(25_000);
    });

    it("counts an endpoint present in two slices once", function () {
      const milestones = derive(
        [
          ...readyBefore,
          slice(-9000, "api-a", "api", ["p1", "p2"]),
          slice(-9000, "api-b", "api", ["p3"]),
          slice(12_000, "api-b", "api", ["p2"]),
          slice(15_000, "api-b", "api", ["p2", "p4"]),
        ],
        [api],
      );
      expect(atOf(milestones, "api:endpoints-lost")).to.equal(12_000);
      expect(atOf(milestones, "api:serving")).to.equal(15_000);
    });

    it("takes wantedReady over the pods Ready before the fault, and a pod gone unready before it no longer counts", function () {
      const transitions = [
        ...readyBefore,
        pods[2]!(-2000, "pod-unready", LOST),
        slice(-9000, "api-a", "api", ["p1", "p2", "p3"]),
        slice(-1500, "api-a", "api", ["p1", "p2"]),
        slice(5000, "api-a", "api", ["p1"]),
        slice(8000, "api-a", "api", ["p1", "p5"]),
      ];
      const byPods = derive(transitions, [api]);
      expect(atOf(byPods, "api:endpoints-lost")).to.equal(5000);
      expect(atOf(byPods, "api:serving")).to.equal(8000);
      const wantsThree = derive(transitions, [{ ...api, wantedReady: 3 }]);
      expect(atOf(wantsThree, "api:endpoints-lost")).to.equal(0);
      expect(atOf(wantsThree, "api:serving")).to.equal(undefined);
    });

    it("has neither without a Service or when the Service never drops", function () {
      const steady = [...readyBefore, slice(-9000, "api-a", "api", ["p1", "p2", "p3"])];
      expect(
        derive(steady, [{ id: "api", app: "api", namespace: "ns" }]).some((m) => m.name.startsWith("api:")),
      ).to.equal(false);
      expect(derive(steady, [api]).filter((m) => m.name.startsWith("api:"))).to.deep.equal([]);
    });
  });

  describe("evictions and split brain", function () {
    const a = podOf("a", { app: "db" });
    const b = podOf("b", { app: "db" });

    it("names a pod of the workload the kubelet evicted, not one that ended otherwise", function () {
      const milestones = derive(
        [
          a(-1000, "pod-ready", LOST),
          a(3000, "pod-terminal", LOST, { reason: "Terminated" }),
          b(4000, "pod-terminal", LOST, { reason: "Evicted" }),
        ],
        [{ id: "db", app: "db", namespace: "ns" }],
      );
      expect(atOf(milestones, "db:pod-evicted")).to.equal(4000);
    });

    it("marks two pods Ready at once on different nodes, unless the first was gone before", function () {
      const split = [a(-1000, "pod-ready", LOST), b(9000, "pod-ready", "worker-2")];
      const workloads: WorkloadRef[] = [{ id: "db", namespace: "ns", matchLabels: { app: "db" } }];
      const milestones = derive(split, workloads);
      expect(milestones.find((m) => m.name === "db:duplicate-ready")).to.deep.equal({
        name: "db:duplicate-ready",
        atMs: 9000,
        node: "worker-2",
      });
      const clean = derive(
        [a(-1000, "pod-ready", LOST), a(8000, "pod-gone", LOST), b(9000, "pod-ready", "worker-2")],
        workloads,
      );
      expect(atOf(clean, "db:duplicate-ready")).to.equal(undefined);
      // The suites' helper gives the same answer.
      expect(duplicateReady(split, T0, "ns", "db", "db")).to.deep.equal([
        { name: "db:duplicate-ready", atMs: 9000, node: "worker-2" },
      ]);
    });

    it("does not count a larger Deployment's replicas Ready on several nodes as split brain", function () {
      const web = (name: string) => podOf(name, { app: "web" });
      const spread = [
        web("w1")(-2000, "pod-ready", LOST),
        web("w2")(-1000, "pod-ready", "worker-2"),
        web("w3")(9000, "pod-ready", "worker-3"),
      ];
      const workloads: WorkloadRef[] = [{ id: "web", namespace: "ns", matchLabels: { app: "web" } }];
      expect(atOf(derive(spread, workloads), "web:duplicate-ready")).to.equal(undefined);
    });
  });

  it("every new name is in the recorder's vocabulary, for the workloads watched only", function () {
    for (const suffix of [
      "multi-attach",
      "va-detach-started",
      "va-gone",
      "va-attached-elsewhere",
      "endpoints-lost",
      "serving",
      "pod-evicted",
      "duplicate-ready",
    ]) {
      expect(isRecordedMilestoneName(`db:${suffix}`, ["db"]), suffix).to.equal(true);
      expect(isRecordedMilestoneName(`web:${suffix}`, ["db"]), suffix).to.equal(false);
    }
  });
});

describe("transitions of claims, EndpointSlices and pods' labels", function () {
  const ctx = (kind: Transition["subject"]["kind"]) => ({ kind, atMs: 7, source: "watch" as const });

  it("carries a pod's labels and claims, a generic ephemeral volume's included", function () {
    const pod: k8s.V1Pod = {
      metadata: { name: "db-0", namespace: "ns", uid: "u", labels: { app: "db", tier: "data" } },
      spec: {
        containers: [],
        volumes: [
          { name: "data", persistentVolumeClaim: { claimName: "data-db-0" } },
          { name: "scratch", ephemeral: { volumeClaimTemplate: { spec: {} } } },
          { name: "config", configMap: { name: "c" } },
        ],
      },
    };
    const [created] = transitionsOf(ctx("Pod"), undefined, pod);
    expect(created?.pod).to.deep.equal({
      labels: { app: "db", tier: "data" },
      claims: ["data-db-0", "db-0-scratch"],
    });
  });

  it("names a pod no longer Ready", function () {
    const ready: k8s.V1Pod = {
      metadata: { name: "p", namespace: "ns", uid: "u" },
      status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
    };
    const unready: k8s.V1Pod = {
      ...ready,
      status: { phase: "Running", conditions: [{ type: "Ready", status: "False" }] },
    };
    expect(transitionsOf(ctx("Pod"), ready, unready).map((t) => t.name)).to.deep.equal(["pod-unready"]);
  });

  it("names a claim's binding once, with its volume", function () {
    const pending: k8s.V1PersistentVolumeClaim = {
      metadata: { name: "data", namespace: "ns", uid: "c" },
      spec: {},
    };
    const boundClaim: k8s.V1PersistentVolumeClaim = { ...pending, spec: { volumeName: "pv-1" } };
    expect(transitionsOf(ctx("PersistentVolumeClaim"), undefined, pending)).to.deep.equal([]);
    const out = transitionsOf(ctx("PersistentVolumeClaim"), pending, boundClaim);
    expect(out.map((t) => [t.name, t.detail])).to.deep.equal([
      ["pvc-bound", { claim: "data", volume: "pv-1" }],
    ]);
    expect(transitionsOf(ctx("PersistentVolumeClaim"), boundClaim, boundClaim)).to.deep.equal([]);
  });

  it("reads a slice's ready endpoints: unset ready counts, false does not, one pod once", function () {
    const endpointSlice = (endpoints: k8s.V1Endpoint[]): k8s.V1EndpointSlice => ({
      metadata: { name: "api-x", namespace: "ns", uid: "s", labels: { "kubernetes.io/service-name": "api" } },
      addressType: "IPv4",
      endpoints,
    });
    const ep = (ip: string, uid: string | undefined, ready?: boolean): k8s.V1Endpoint => ({
      addresses: [ip],
      ...(uid ? { targetRef: { kind: "Pod", uid } } : {}),
      ...(ready === undefined ? {} : { conditions: { ready } }),
    });
    const first = endpointSlice([
      ep("10.0.0.1", "p1", true),
      ep("10.0.0.2", "p2"),
      ep("10.0.0.3", "p3", false),
    ]);
    const [added] = transitionsOf(ctx("EndpointSlice"), undefined, first);
    expect(added?.detail).to.deep.equal({ service: "api", ready: "2", endpoints: "p1,p2" });
    // A change that leaves the ready set as it was (p3 still not ready, another address) is no transition.
    const same = endpointSlice([
      ep("10.0.0.2", "p2"),
      ep("10.0.0.1", "p1", true),
      ep("10.0.0.9", "p3", false),
    ]);
    expect(transitionsOf(ctx("EndpointSlice"), first, same)).to.deep.equal([]);
    const noTarget = endpointSlice([ep("10.0.0.7", undefined)]);
    expect(transitionsOf(ctx("EndpointSlice"), first, noTarget)[0]?.detail?.["endpoints"]).to.equal(
      "10.0.0.7",
    );
    const [deleted] = transitionsOf(ctx("EndpointSlice"), first, undefined);
    expect(deleted?.detail).to.deep.equal({ service: "api", ready: "0", endpoints: "" });
  });
});
