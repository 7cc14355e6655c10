import { expect } from "chai";
import { parse } from "yaml";
import { TIMING_PROFILES, type TimingProfile } from "../../lib/cluster/profiles.js";
import { nominalWindows, UNREACHABLE_MILESTONE, type ExpectedMilestone } from "../../lib/expect/model.js";
import {
  tolerationDefaults,
  workloadFacts,
  type KubeObject,
  type WorkloadFacts,
} from "../../lib/expect/workload-facts.js";
import {
  expectedScenarioWindows,
  expectedWorkloadTimeline,
  pressureRanking,
} from "../../lib/expect/workload-model.js";
import { fixtureObjects } from "../support/workload-fixtures.js";
import { situation } from "../support/workload-situation.js";
import { workloadHead } from "../support/workload-yaml.js";

const fast = TIMING_PROFILES.fast;
const upstream = TIMING_PROFILES.default;

function facts(id: string, objects: KubeObject[], profile: TimingProfile = upstream): WorkloadFacts {
  return workloadFacts(id, objects, tolerationDefaults(profile));
}

function web(podSpec: string, replicas = 1, kind = "Deployment"): KubeObject {
  return parse(
    `${workloadHead(kind, "web", replicas)} { containers: [{ name: c, image: pause }], ${podSpec} }`,
  ) as KubeObject;
}

const UNREACHABLE_30 =
  "tolerations: [{ key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 30 }]";

function window(windows: readonly ExpectedMilestone[], name: string): ExpectedMilestone {
  const w = windows.find((x) => x.name === name);
  if (w === undefined) throw new Error(`no window ${name} in ${windows.map((x) => x.name).join(", ")}`);
  return w;
}

const nominal = (windows: readonly ExpectedMilestone[], name: string) => {
  const w = nominalWindows(windows).find((x) => x.name === name);
  if (w === undefined) throw new Error(`no nominal window ${name}`);
  return w;
};

describe("workload model: windows from a workload's own spec", function () {
  it("its own tolerationSeconds 30 moves the Deployment's eviction (not the 300 s default)", function () {
    const s = situation(upstream);
    const own = expectedScenarioWindows([{ facts: facts("web", [web(UNREACHABLE_30)]), lostPods: 1 }], s);
    const byDefault = expectedScenarioWindows([{ facts: facts("web", [web("")]), lostPods: 1 }], s);
    expect(window(own, "web:pod-deletion-requested")).to.deep.include({
      after: UNREACHABLE_MILESTONE,
      minMs: 30_000,
      maxMs: 31_000,
    });
    expect(window(own, "web:pod-deletion-requested").why).to.include("tolerationSeconds 30");
    expect(window(byDefault, "web:pod-deletion-requested")).to.deep.include({
      minMs: 300_000,
      maxMs: 301_000,
    });
    expect(nominal(byDefault, "web:recovered").minMs - nominal(own, "web:recovered").minMs).to.equal(270_000);
  });

  it("a toleration without seconds: never evicted, never replaced", function () {
    const forever = facts("web", [
      web("tolerations: [{ key: node.kubernetes.io/unreachable, operator: Exists }]"),
    ]);
    const windows = expectedWorkloadTimeline(forever, situation(upstream));
    for (const name of ["web:pod-deletion-requested", "web:recovered"]) {
      expect(window(windows, name).maxMs, name).to.equal(null);
    }
    expect(windows.filter((w) => w.maxMs !== null)).to.deep.equal([]);
  });

  it("a DaemonSet's pod is never evicted from the lost node nor replaced elsewhere, with or without the controller", function () {
    const ds = parse(`
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent }
spec:
  selector: { matchLabels: { app: agent } }
  template: { metadata: { labels: { app: agent } }, spec: { containers: [{ name: c, image: pause }] } }`) as KubeObject;
    const agent = facts("agent", [ds]);
    const alone = expectedWorkloadTimeline(agent, situation(upstream));
    expect(window(alone, "agent:pod-deletion-requested").maxMs).to.equal(null);
    expect(window(alone, "agent:recovered").maxMs).to.equal(null);
    const controller = { unhealthyAfterMs: 20_000, checkIntervalMs: 500, fenceMs: 1000, cleanupMs: 6000 };
    const fenced = expectedWorkloadTimeline(agent, situation(upstream, { controller }));
    expect(window(fenced, "agent:recovered").maxMs).to.equal(null);
  });

  it("an RWX volume has no detach or attach step; RWO with attach does, keyed by the workload", function () {
    const rwx = facts("shared", fixtureObjects("statefulset-pvc.yaml"));
    const controller = { unhealthyAfterMs: 6_000, checkIntervalMs: 500, fenceMs: 1000, cleanupMs: 3000 };
    for (const more of [{ controller }, { operator: { action: "force-delete" as const, afterMs: 20_000 } }]) {
      const s = situation(fast, more);
      const attached = expectedWorkloadTimeline(rwx, s).map((w) => w.name);
      expect(attached).to.include.members(["shared:va-gone", "shared:va-attached-elsewhere"]);
      const noDetach = expectedWorkloadTimeline({ ...rwx, volume: "rwx" }, s).map((w) => w.name);
      expect(noDetach.filter((n) => /va-|multi-attach/.test(n))).to.deep.equal([]);
      expect(noDetach).to.include("shared:recovered");
    }
  });

  it("two StatefulSets with volumes: each its own va-gone, anchored on its own pod", function () {
    const objects = fixtureObjects("statefulset-pvc.yaml");
    const windows = expectedScenarioWindows(
      [
        { facts: facts("db1", objects), lostPods: 1 },
        { facts: facts("db2", objects), lostPods: 1 },
      ],
      situation(fast, { operator: { action: "out-of-service", afterMs: 60_000 } }),
    );
    expect(window(windows, "db1:va-gone").after).to.equal("db1:pod-gone");
    expect(window(windows, "db2:va-gone").after).to.equal("db2:pod-gone");
    expect(windows.filter((w) => w.name === "va-gone")).to.deep.equal([]);
    expect(window(windows, "db1:duplicate-ready").maxMs).to.equal(null);
  });

  it("a force deletion without out-of-service: the volume waits 6 minutes; a Deployment with RWO never recovers untended", function () {
    const db = facts("db", fixtureObjects("statefulset-pvc.yaml"));
    const byHand = expectedWorkloadTimeline(
      db,
      situation(fast, { operator: { action: "force-delete", afterMs: 20_000 } }),
    );
    expect(window(byHand, "db:va-detach-started")).to.deep.include({ after: "db:pod-gone", minMs: 360_000 });
    expect(window(byHand, "db:multi-attach").after).to.equal("db:replacement-created");
    const rwoDeployment = { ...facts("web", [web("")]), volume: "rwo-attach" as const };
    const untended = expectedWorkloadTimeline(rwoDeployment, situation(fast));
    expect(window(untended, "web:replacement-created").maxMs).to.not.equal(null);
    expect(window(untended, "web:multi-attach").maxMs).to.not.equal(null);
    expect(window(untended, "web:recovered").maxMs).to.equal(null);
  });

  it("lostPods 0: untouched, only 'never' windows", function () {
    const db = facts("db", fixtureObjects("statefulset-pvc.yaml"));
    for (const fault of ["stop", "graceful-shutdown", "memory-pressure"] as const) {
      const windows = expectedWorkloadTimeline(
        db,
        situation(fast, { fault, lostPods: 0, durationMs: 60_000 }),
      );
      expect(windows.length, fault).to.be.greaterThan(0);
      expect(windows.every((w) => w.maxMs === null)).to.equal(true);
      expect(windows.map((w) => w.name)).to.include.members(["db:replacement-created", "db:endpoints-lost"]);
    }
    const stop = expectedWorkloadTimeline(db, situation(fast, { lostPods: 0 }));
    expect(stop.map((w) => w.name)).to.include("db:pod-deletion-requested");
  });

  it("replicas beyond what was lost keep serving (said in the why); recovered waits for all that were lost", function () {
    const three = facts("web", [web("", 3)]);
    const recovered = window(expectedWorkloadTimeline(three, situation(fast)), "web:recovered");
    expect(recovered.why).to.include("1 of 3 replaced; 2 elsewhere keep serving");
    const all = window(expectedWorkloadTimeline(three, situation(fast, { lostPods: 3 })), "web:recovered");
    expect(all.why).to.include("nothing serves meanwhile");
  });
});

describe("workload model: drain and PodDisruptionBudgets", function () {
  const budget = (spec: string) =>
    parse(
      `{ apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: { name: db-pdb }, spec: { selector: { matchLabels: { app: web } }, ${spec} } }`,
    ) as KubeObject;
  const drain = situation(upstream, { operator: { action: "drain", afterMs: 60_000 } });

  it("maxUnavailable 0 refuses the drain: only the toleration evicts, and the pod is never gone", function () {
    const db = facts("db", [web("", 1, "StatefulSet"), budget("maxUnavailable: 0")]);
    const windows = expectedWorkloadTimeline(db, drain);
    const deletion = window(windows, "db:pod-deletion-requested");
    expect(deletion.after).to.equal(UNREACHABLE_MILESTONE);
    expect(deletion.why).to.include("db-pdb").and.include("refused");
    expect(window(windows, "db:pod-gone").maxMs).to.equal(null);
    expect(window(windows, "db:recovered").maxMs).to.equal(null);
  });

  it("a budget the lost pods fit in lets the drain evict them; the second drain deletes them", function () {
    const db = facts("db", [web("", 3, "StatefulSet"), budget('minAvailable: "60%"')]);
    const windows = expectedWorkloadTimeline(db, drain);
    expect(window(windows, "db:pod-deletion-requested")).to.deep.include({
      after: "drain-started",
      maxMs: 1000,
    });
    expect(window(windows, "db:pod-gone").after).to.equal("released-by-hand");
    // Two of three lost: 1 Ready left, the budget wants 2.
    const two = expectedWorkloadTimeline(db, { ...drain, lostPods: 2 });
    expect(window(two, "db:pod-deletion-requested").after).to.equal(UNREACHABLE_MILESTONE);
  });
});

describe("workload model: the kubelet's own faults", function () {
  it("graceful shutdown: ended within the tighter of its grace and shutdownGracePeriod; a bare Pod is not replaced", function () {
    const quick = facts("web", [web("terminationGracePeriodSeconds: 5")]);
    const s = situation(fast, { fault: "graceful-shutdown" });
    const windows = expectedWorkloadTimeline(quick, s);
    expect(window(windows, "web:pod-terminated")).to.deep.include({ minMs: 0, maxMs: 5000 });
    expect(window(windows, "web:recovered").after).to.equal("web:pod-terminated");
    const slow = expectedWorkloadTimeline(facts("web", [web("terminationGracePeriodSeconds: 600")]), s);
    expect(window(slow, "web:pod-terminated").maxMs).to.equal(fast.simKubelet.shutdownGracePeriodMs);
    // Evicted after a not-ready toleration of 0 s, it may be replaced before the kubelet ends it.
    const impatient = facts("web", [
      web(
        "tolerations: [{ key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 0 }]",
      ),
    ]);
    expect(window(expectedWorkloadTimeline(impatient, s), "web:recovered").after).to.equal("fault-injected");
    const solo = parse(
      "{ apiVersion: v1, kind: Pod, metadata: { name: solo }, spec: { containers: [{ name: c, image: pause }] } }",
    ) as KubeObject;
    expect(window(expectedWorkloadTimeline(facts("solo", [solo]), s), "solo:recovered").maxMs).to.equal(null);
  });

  it("pressure: evicted in the kubelet's order, BestEffort first, then by priority among pods within their requests", function () {
    const docs = fixtureObjects("pressure.yaml");
    const pods = ["besteffort", "burstable", "guaranteed"].map((id, i) => facts(id, [docs[i] as KubeObject]));
    expect(pods.map((p) => p.qos)).to.deep.equal(["BestEffort", "Burstable", "Guaranteed"]);
    const s = situation(fast, { fault: "memory-pressure", durationMs: 300_000 });
    const windows = expectedScenarioWindows(
      pods.map((p) => ({ facts: p, lostPods: 1 })),
      s,
    );
    expect(window(windows, "besteffort:pod-evicted").after).to.equal("fault-injected");
    expect(window(windows, "burstable:pod-evicted").after).to.equal("besteffort:pod-evicted");
    expect(window(windows, "guaranteed:pod-evicted").after).to.equal("burstable:pod-evicted");
    // A higher priority puts the Burstable pod behind the Guaranteed one (neither exceeds its request).
    const ranked = pressureRanking(
      [
        { facts: pods[0]!, lostPods: 1 },
        { facts: { ...pods[1]!, priority: 1000 }, lostPods: 1 },
        { facts: pods[2]!, lostPods: 1 },
      ],
      "memory",
    );
    expect(ranked.order.map((p) => p.id)).to.deep.equal(["besteffort", "guaranteed", "burstable"]);
  });

  it("pressure: critical pods are never evicted; a short pressure never reaches the last", function () {
    const docs = fixtureObjects("pressure.yaml");
    const pods = ["besteffort", "burstable", "guaranteed"].map((id, i) => facts(id, [docs[i] as KubeObject]));
    const critical = expectedWorkloadTimeline(
      { ...pods[0]!, priority: 2_000_001_000, critical: true },
      situation(fast, { fault: "disk-pressure", durationMs: 60_000 }),
    );
    expect(window(critical, "besteffort:pod-evicted").maxMs).to.equal(null);
    const short = expectedScenarioWindows(
      pods.map((p) => ({ facts: p, lostPods: 1 })),
      situation(fast, { fault: "memory-pressure", durationMs: 5_000 }),
    );
    expect(window(short, "guaranteed:pod-evicted").maxMs).to.equal(null);
  });

  it("partition: healed before the toleration runs out, nothing is evicted; past it, the pod goes once healed", function () {
    const deployment = facts("web", [web(UNREACHABLE_30)], fast);
    const short = expectedWorkloadTimeline(
      deployment,
      situation(fast, { fault: "partition", durationMs: 3_000 }),
    );
    expect(window(short, "web:pod-deletion-requested").maxMs).to.equal(null);
    const long = expectedWorkloadTimeline(
      deployment,
      situation(fast, { fault: "partition", durationMs: 120_000 }),
    );
    expect(window(long, "web:pod-deletion-requested").maxMs).to.equal(31_000);
    expect(window(long, "web:pod-gone").after).to.equal("partition-healed");
  });
});
