import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import { deriveNodeLossMilestones, recoveryMs } from "../../lib/observe/milestones.js";
import { terminalReason, transitionsOf } from "../../lib/observe/transitions.js";
import type { Transition } from "../../lib/observe/types.js";

const node = (conditions: [string, string][], taints: string[] = []): k8s.V1Node => ({
  metadata: { name: "worker-1", uid: "n1" },
  spec: {
    taints: taints.map((key) => ({ key, effect: "NoExecute", timeAdded: new Date("2026-01-01T00:00:10Z") })),
  },
  status: {
    conditions: conditions.map(([type, status]) => ({
      type,
      status,
      lastTransitionTime: new Date("2026-01-01T00:00:09Z"),
    })),
  },
});

describe("transitions from object versions", function () {
  const ctx = { kind: "Node" as const, atMs: 1000, source: "watch" as const };

  it("names Ready changes and taint additions on a node, with the API's timestamps", function () {
    const out = transitionsOf(
      ctx,
      node([["Ready", "True"]]),
      node([["Ready", "Unknown"]], ["node.kubernetes.io/unreachable"]),
    );
    expect(out.map((t) => t.name)).to.deep.equal(["node-condition", "taint-added"]);
    expect(out[0]?.detail).to.deep.include({ type: "Ready", status: "Unknown", from: "True" });
    expect(out[0]?.apiTime).to.equal("2026-01-01T00:00:09.000Z");
    expect(out[1]?.detail?.["key"]).to.equal("node.kubernetes.io/unreachable");
    expect(out[1]?.node).to.equal("worker-1");
  });

  it("reports a removed taint and nothing for an unchanged node", function () {
    expect(
      transitionsOf(ctx, node([["Ready", "True"]], ["a"]), node([["Ready", "True"]])).map((t) => t.name),
    ).to.deep.equal(["taint-removed"]);
    expect(transitionsOf(ctx, node([["Ready", "True"]]), node([["Ready", "True"]]))).to.deep.equal([]);
  });

  it("names a change of the kubelet's volumesInUse report, and none when the set is the same", function () {
    const withVolumes = (volumes: string[]): k8s.V1Node => {
      const n = node([["Ready", "True"]]);
      return { ...n, status: { ...n.status, volumesInUse: volumes } };
    };
    const out = transitionsOf(ctx, withVolumes(["a", "b"]), withVolumes([]));
    expect(out.map((t) => t.name)).to.deep.equal(["node-volumes-in-use"]);
    expect(out[0]?.detail).to.deep.include({ count: "0", from: "2" });
    expect(transitionsOf(ctx, withVolumes(["b", "a"]), withVolumes(["a", "b"]))).to.deep.equal([]);
  });

  it("follows a pod from creation to deletion", function () {
    const podCtx = { kind: "Pod" as const, atMs: 5, source: "watch" as const };
    const pending: k8s.V1Pod = {
      metadata: { name: "p", namespace: "ns", uid: "u", labels: { app: "web" } },
      spec: { containers: [] },
    };
    const scheduled: k8s.V1Pod = { ...pending, spec: { containers: [], nodeName: "worker-2" } };
    const ready: k8s.V1Pod = {
      ...scheduled,
      status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
    };
    const terminating: k8s.V1Pod = {
      ...ready,
      metadata: { ...ready.metadata, deletionTimestamp: new Date("2026-01-01T00:01:00Z") },
    };
    const names = [
      ...transitionsOf(podCtx, undefined, pending),
      ...transitionsOf(podCtx, pending, scheduled),
      ...transitionsOf(podCtx, scheduled, ready),
      ...transitionsOf(podCtx, ready, terminating),
      ...transitionsOf(podCtx, terminating, undefined),
    ].map((t) => t.name);
    expect(names).to.deep.equal([
      "pod-created",
      "pod-scheduled",
      "pod-running",
      "pod-ready",
      "pod-deletion-requested",
      "pod-gone",
    ]);
  });
});

describe("node-loss milestones", function () {
  const T0 = 1_000_000;
  let seq = 0;
  const t = (name: Transition["name"], atMs: number, extra: Partial<Transition> = {}): Transition => ({
    name,
    atMs: T0 + atMs,
    subject: { kind: "Pod", name: "x", namespace: "ns", uid: `u${seq++}` },
    source: "watch",
    ...extra,
  });
  const pod = (uid: string, app: string) => ({
    subject: { kind: "Pod" as const, name: uid, namespace: "ns", uid },
    detail: { app },
  });
  const transitions: Transition[] = [
    t("pod-scheduled", -5000, { ...pod("d1", "web"), node: "worker-1" }),
    t("pod-scheduled", -5000, { ...pod("s1", "db"), node: "worker-1" }),
    t("lease-renewed", -100, {
      node: "worker-1",
      subject: { kind: "Lease", name: "worker-1" },
      apiTime: new Date(T0 - 1500).toISOString(),
    }),
    t("node-condition", 9000, {
      node: "worker-1",
      subject: { kind: "Node", name: "worker-1" },
      detail: { type: "Ready", status: "Unknown" },
    }),
    t("taint-added", 9100, {
      node: "worker-1",
      subject: { kind: "Node", name: "worker-1" },
      detail: { key: "node.kubernetes.io/unreachable" },
    }),
    t("pod-deletion-requested", 14_000, { ...pod("d1", "web"), node: "worker-1" }),
    t("pod-created", 14_100, pod("d2", "web")),
    t("pod-scheduled", 14_200, { ...pod("d2", "web"), node: "worker-2" }),
    t("pod-ready", 15_200, { ...pod("d2", "web"), node: "worker-2" }),
    t("pod-deletion-requested", 14_000, { ...pod("s1", "db"), node: "worker-1" }),
  ];
  const context = {
    faultAtMs: T0,
    lostNode: "worker-1",
    workloads: [
      { id: "deployment", app: "web", namespace: "ns" },
      { id: "statefulset", app: "db", namespace: "ns" },
    ],
  };

  it("derives the chain in time order, relative to the fault", function () {
    const milestones = deriveNodeLossMilestones(transitions, context);
    expect(milestones.map((m) => [m.name, m.atMs])).to.deep.equal([
      ["last-lease-renewal", -1500],
      ["fault-injected", 0],
      ["node-ready-unknown", 9000],
      ["taint-added:node.kubernetes.io/unreachable", 9100],
      ["deployment:pod-deletion-requested", 14_000],
      ["statefulset:pod-deletion-requested", 14_000],
      ["deployment:replacement-created", 14_100],
      ["deployment:replacement-scheduled", 14_200],
      ["deployment:replacement-ready", 15_200],
      ["deployment:recovered", 15_200],
    ]);
  });

  it("reports recovery only when every workload recovered", function () {
    const milestones = deriveNodeLossMilestones(transitions, context);
    expect(recoveryMs(milestones, ["deployment"])).to.equal(15_200);
    expect(recoveryMs(milestones, ["deployment", "statefulset"])).to.equal(undefined);
  });

  it("counts a workload with a watched Service recovered once it serves again too", function () {
    const milestones = [
      { name: "web:recovered", atMs: 15_200 },
      { name: "web:serving", atMs: 16_100 },
      { name: "db:recovered", atMs: 12_000 },
    ];
    expect(recoveryMs(milestones, ["web", "db"])).to.equal(16_100);
    expect(recoveryMs(milestones, ["db"])).to.equal(12_000);
  });

  describe("a replacement's transient volume error (kubelet-retry)", function () {
    const refused =
      'Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC ns/data-s: failed to fetch PVC from API server: persistentvolumeclaims "data-s" is forbidden: User "system:node:worker-2" cannot get resource "persistentvolumeclaims" in API group "" in the namespace "ns": no relationship found between node \'worker-2\' and this object';
    const mountEvent = (atMs: number, involvedUid: string, message: string) =>
      t("event", atMs, {
        subject: { kind: "Event", name: "e", namespace: "ns" },
        detail: {
          reason: "FailedMount",
          involvedKind: "Pod",
          involvedName: "s",
          involvedNamespace: "ns",
          involvedUid,
          message,
        },
      });
    const withReplacement = [
      ...transitions,
      t("pod-created", 14_100, pod("s2", "db")),
      t("pod-scheduled", 14_200, { ...pod("s2", "db"), node: "worker-2" }),
    ];
    const retryOf = (extra: Transition[]) =>
      deriveNodeLossMilestones([...withReplacement, ...extra], context).find(
        (m) => m.name === "statefulset:kubelet-retry",
      )?.atMs;

    it("is recorded when the Node authorizer refused the replacement's PVC read", function () {
      expect(retryOf([mountEvent(14_900, "s2", refused)])).to.equal(14_900);
    });

    it("is not recorded for another volume error, or for a pod that is not a replacement", function () {
      expect(
        retryOf([mountEvent(14_900, "s2", "MountVolume.SetUp failed: mount failed: exit status 32")]),
      ).to.equal(undefined);
      expect(retryOf([mountEvent(14_900, "s1", refused)])).to.equal(undefined);
    });
  });
});

describe("why a terminal pod ended", function () {
  const ended = (status: k8s.V1PodStatus): k8s.V1Pod => ({ metadata: { name: "p", uid: "u" }, status });
  const disruption = (message: string, reason = "TerminationByKubelet"): k8s.V1PodCondition => ({
    type: "DisruptionTarget",
    status: "True",
    reason,
    message,
  });

  it("takes status.reason when the kubelet set it", function () {
    expect(terminalReason(ended({ phase: "Failed", reason: "Evicted" }))).to.equal("Evicted");
  });

  it("reads an eviction or a shutdown from DisruptionTarget when the pod ended Succeeded without a reason", function () {
    const evicted = ended({
      phase: "Succeeded",
      conditions: [
        disruption("The node was low on resource: memory. Threshold quantity: 200Mi, available: 180Mi. "),
      ],
    });
    expect(terminalReason(evicted)).to.equal("Evicted");
    const shutdown = ended({
      phase: "Succeeded",
      conditions: [disruption("Pod was terminated in response to imminent node shutdown.")],
    });
    expect(terminalReason(shutdown)).to.equal("Terminated");
  });

  it("names no reason for a pod that simply finished, or one disrupted by someone else", function () {
    expect(terminalReason(ended({ phase: "Succeeded" }))).to.equal("");
    const preempted = ended({
      phase: "Failed",
      conditions: [disruption("Preempted in order to admit critical pod", "PreemptionByScheduler")],
    });
    expect(terminalReason(preempted)).to.equal("");
  });

  it("carries the reason on the pod-terminal transition", function () {
    const ctx = { kind: "Pod" as const, atMs: 5, source: "watch" as const };
    const running = ended({ phase: "Running" });
    const evicted = ended({
      phase: "Succeeded",
      conditions: [disruption("The node was low on resource: ephemeral-storage. ")],
    });
    const terminal = transitionsOf(ctx, running, evicted).find((t) => t.name === "pod-terminal");
    expect(terminal?.detail?.["reason"]).to.equal("Evicted");
  });
});
