import { expect } from "chai";
import {
  awaitingAdmission,
  isBestEffort,
  refusalMessage,
  refusedUnderPressure,
} from "../../lib/cluster/sim/kubelet/pressure-admission.js";
import { podStarted } from "../../lib/kube/eviction-order.js";
import type { k8s } from "../../lib/kube/client.js";

function pod(
  name: string,
  options: {
    requests?: Record<string, string>;
    priority?: number;
    tolerations?: k8s.V1Toleration[];
    phase?: string;
    started?: boolean;
  } = {},
): k8s.V1Pod {
  return {
    metadata: { name, namespace: "ns", uid: `uid-${name}` },
    spec: {
      containers: [
        { name: "app", ...(options.requests ? { resources: { requests: options.requests } } : {}) },
      ],
      ...(options.priority !== undefined ? { priority: options.priority } : {}),
      ...(options.tolerations ? { tolerations: options.tolerations } : {}),
    },
    status: {
      phase: options.phase ?? "Pending",
      ...(options.started
        ? { containerStatuses: [{ name: "app", image: "i", imageID: "", ready: true, restartCount: 0 }] }
        : {}),
    },
  };
}

describe("the sim kubelet's admission under pressure", function () {
  const bestEffort = pod("be");
  const burstable = pod("bu", { requests: { memory: "64Mi" } });
  const critical = pod("proxy", { priority: 2_000_001_000 });
  const tolerating = pod("tol", {
    tolerations: [{ key: "node.kubernetes.io/memory-pressure", operator: "Exists", effect: "NoSchedule" }],
  });

  it("refuses under MemoryPressure only BestEffort pods that do not tolerate its taint", function () {
    expect(isBestEffort(bestEffort)).to.equal(true);
    expect(isBestEffort(burstable)).to.equal(false);
    expect(
      [bestEffort, burstable, critical, tolerating].map((p) => refusedUnderPressure(p, "memory")),
    ).to.deep.equal([true, false, false, false]);
  });

  it("refuses under DiskPressure every pod that is not critical", function () {
    expect(
      [bestEffort, burstable, critical, tolerating].map((p) => refusedUnderPressure(p, "disk")),
    ).to.deep.equal([true, true, false, true]);
  });

  it("decides every pod the kubelet has not admitted, started by KWOK or not, and says why as the kubelet does", function () {
    const admittedBefore = pod("run", { phase: "Running", started: true });
    const startedByKwok = pod("kwok", { phase: "Running", started: true });
    const deleting: k8s.V1Pod = { ...pod("del"), metadata: { name: "del", deletionTimestamp: new Date() } };
    const ended = pod("end", { phase: "Failed" });
    const admitted = new Set(["uid-run"]);
    expect(
      awaitingAdmission([bestEffort, admittedBefore, startedByKwok, deleting, ended], admitted).map(
        (p) => p.metadata?.name,
      ),
    ).to.deep.equal(["be", "kwok"]);
    expect([bestEffort, admittedBefore].map(podStarted)).to.deep.equal([false, true]);
    expect(refusalMessage("MemoryPressure")).to.equal("The node had condition: [MemoryPressure]. ");
  });
});
