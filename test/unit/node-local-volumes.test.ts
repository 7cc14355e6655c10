// Node-local volumes (kind's default local-path class, local PersistentVolumes): which claims are
// node-local, what the model expects when their node is lost (back only with the node), the
// milestones of a replacement on the returned node, and budgets that cannot be met.
import { expect } from "chai";
import { join } from "node:path";
import { parse } from "yaml";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { listExpectationInputs } from "../../lib/cli/catalogue.js";
import { budgetsExpectedNever, checkBudgets, missedBudgetLines } from "../../lib/expect/budgets.js";
import { nominalWindows, type ExpectedMilestone } from "../../lib/expect/model.js";
import { PARTITION_HEALED_MILESTONE } from "../../lib/expect/node-windows.js";
import {
  tolerationDefaults,
  workloadFacts,
  type KubeObject,
  type WorkloadFacts,
  type WorkloadFactsOptions,
} from "../../lib/expect/workload-facts.js";
import { expectedWorkloadTimeline } from "../../lib/expect/workload-model.js";
import { storageClassInfo, type StorageClassInfo } from "../../lib/kube/storage-classes.js";
import { deriveNodeLossMilestones, type WorkloadRef } from "../../lib/observe/milestones.js";
import type { Transition } from "../../lib/observe/types.js";
import { fileExpectations, fileWorkloadFacts } from "../../lib/scenario-file/expected.js";
import { loadScenarioFiles } from "../../lib/scenario-file/load.js";
import { readWorkloadObjects } from "../../lib/scenario-file/manifests.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { situation } from "../support/workload-situation.js";
import { workloadHead } from "../support/workload-yaml.js";

const upstream = TIMING_PROFILES.default;
const fast = TIMING_PROFILES.fast;

/** kind's classes as rekindle's node image and kind provider install them. */
const KIND_CLASSES: StorageClassInfo[] = [
  {
    name: "standard",
    provisioner: "rancher.io/local-path",
    isDefault: true,
  },
  { name: "rekindle-shared", provisioner: "rekindle.dev/shared-hostpath", isDefault: false },
];
const SIM_CLASSES: StorageClassInfo[] = [
  { name: "rekindle-sim", provisioner: "csi.rekindle.dev", isDefault: true },
];

const docs = (...texts: string[]): KubeObject[] => texts.map((t) => parse(t) as KubeObject);

function statefulSet(claimSpec: string, kind = "StatefulSet"): string {
  const claims =
    kind === "StatefulSet"
      ? `
  volumeClaimTemplates:
    - metadata: { name: data }
      spec: { accessModes: [ReadWriteOnce], ${claimSpec} resources: { requests: { storage: 1Gi } } }`
      : "";
  const volumes =
    kind === "StatefulSet" ? "" : ", volumes: [{ name: data, persistentVolumeClaim: { claimName: data } }]";
  return `${workloadHead(kind, "db", 1)} { containers: [{ name: c, image: pause }]${volumes} }${claims}`;
}

const localPv = (name: string, cls: string) => `
apiVersion: v1
kind: PersistentVolume
metadata: { name: ${name} }
spec:
  capacity: { storage: 1Gi }
  accessModes: [ReadWriteOnce]
  storageClassName: ${cls}
  local: { path: /tmp }
  nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: topology.kubernetes.io/zone, operator: In, values: [zone-b] }] }] } }`;

const nfsPv = (name: string, cls: string) => `
apiVersion: v1
kind: PersistentVolume
metadata: { name: ${name} }
spec: { capacity: { storage: 1Gi }, accessModes: [ReadWriteOnce], storageClassName: ${cls}, nfs: { server: nfs, path: /x } }`;

const noProvisioner = (name: string, annotations = "{}") => `
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: { name: ${name}, annotations: ${annotations} }
provisioner: kubernetes.io/no-provisioner`;

function factsOf(objects: KubeObject[], more: Partial<WorkloadFactsOptions> = {}): WorkloadFacts {
  return workloadFacts("db", objects, { ...tolerationDefaults(upstream), ...more });
}

describe("node-local volumes: which claims", function () {
  it("a claim naming no class takes the cluster's default: local-path on kind is node-local, the sim's attaches", function () {
    const onKind = factsOf(docs(statefulSet("")), {
      storageClasses: KIND_CLASSES,
      volumeAttachRequired: false,
    });
    expect(onKind.volume).to.equal("node-local");
    expect(onKind.nodeLocalWhy).to.equal(
      "StorageClass standard (rancher.io/local-path, the default class) keeps each volume on the node that first used it",
    );
    expect(factsOf(docs(statefulSet("")), { storageClasses: SIM_CLASSES }).volume).to.equal("rwo-attach");
    // No class known at all (rekindle list before any cluster): as before, by the provider's attach.
    expect(factsOf(docs(statefulSet(""))).volume).to.equal("rwo-attach");
  });

  it("a claim naming kind's shared class can move: no attach step, no node", function () {
    const shared = factsOf(docs(statefulSet("storageClassName: rekindle-shared,")), {
      storageClasses: KIND_CLASSES,
      volumeAttachRequired: false,
    });
    expect(shared).to.deep.include({ volume: "none" });
    expect(shared.nodeLocalWhy).to.equal(undefined);
  });

  it("the manifests' own no-provisioner class and local PersistentVolume", function () {
    const own = factsOf(
      docs(statefulSet("storageClassName: mine,"), noProvisioner("mine"), localPv("pv-a", "mine")),
    );
    expect(own.volume).to.equal("node-local");
    expect(own.nodeLocalWhy).to.include("PersistentVolume pv-a is a local volume");
    // Without its volumes in the set, a no-provisioner class is taken to serve local ones.
    expect(
      factsOf(docs(statefulSet("storageClassName: mine,"), noProvisioner("mine"))).nodeLocalWhy,
    ).to.include("serves pre-made local volumes");
    // …but network volumes of it in the set can follow the pod.
    expect(
      factsOf(docs(statefulSet("storageClassName: mine,"), noProvisioner("mine"), nfsPv("pv-n", "mine")))
        .volume,
    ).to.equal("rwo-attach");
    // A class the cluster does not have, with only local volumes of it in the set.
    expect(
      factsOf(docs(statefulSet("storageClassName: static,"), localPv("pv-s", "static"))).volume,
    ).to.equal("node-local");
  });

  it("a claim bound by name to a local volume; a Deployment's claim by name", function () {
    const claim = `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data }
spec: { accessModes: [ReadWriteOnce], volumeName: pv-x, storageClassName: "" }`;
    const deployment = factsOf(docs(statefulSet("", "Deployment"), claim, localPv("pv-x", "")));
    expect(deployment).to.deep.include({ kind: "Deployment", volume: "node-local" });
    expect(factsOf(docs(statefulSet("", "Deployment"), claim, nfsPv("pv-x", ""))).volume).to.equal(
      "rwo-attach",
    );
  });

  it("the rekindle.dev/node-local annotation overrides the provisioner, either way", function () {
    const mine = (value: string) =>
      storageClassInfo({
        metadata: { name: "fast-disk", annotations: { "rekindle.dev/node-local": value } },
        provisioner: "ebs.csi.aws.com",
      });
    expect(
      factsOf(docs(statefulSet("storageClassName: fast-disk,")), { storageClasses: [mine("true")] }),
    ).to.deep.include({
      volume: "node-local",
      nodeLocalWhy: 'StorageClass fast-disk (ebs.csi.aws.com) is marked rekindle.dev/node-local: "true"',
    });
    const notLocal = factsOf(
      docs(
        statefulSet("storageClassName: mine,"),
        noProvisioner("mine", '{ "rekindle.dev/node-local": "false" }'),
      ),
    );
    expect(notLocal.volume).to.equal("rwo-attach");
  });

  it("reads the default class from either annotation", function () {
    for (const key of [
      "storageclass.kubernetes.io/is-default-class",
      "storageclass.beta.kubernetes.io/is-default-class",
    ])
      expect(
        storageClassInfo({ metadata: { name: "x", annotations: { [key]: "true" } }, provisioner: "p" }),
      ).to.deep.equal({
        name: "x",
        provisioner: "p",
        isDefault: true,
      });
  });
});

const CONTROLLER = { unhealthyAfterMs: 6_000, checkIntervalMs: 500, fenceMs: 1000, cleanupMs: 3000 };

const TOLERATES_10 = `
tolerations: [{ key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 10 }]`;

function local(kind = "StatefulSet", podSpec = ""): WorkloadFacts {
  const text = statefulSet("", kind).replace(
    "containers: [{ name: c, image: pause }]",
    `containers: [{ name: c, image: pause }]${podSpec ? `, ${podSpec.trim()}` : ""}`,
  );
  return workloadFacts("db", docs(text), { ...tolerationDefaults(fast), storageClasses: KIND_CLASSES });
}

function window(windows: readonly ExpectedMilestone[], name: string): ExpectedMilestone {
  const w = windows.find((x) => x.name === name);
  if (w === undefined) throw new Error(`no window ${name} in ${windows.map((x) => x.name).join(", ")}`);
  return w;
}

describe("node-local volumes: the model", function () {
  it("a stop with the controller: the replacement is created, then never Ready; not recovered within the run", function () {
    const windows = expectedWorkloadTimeline(local(), situation(fast, { controller: CONTROLLER }));
    expect(window(windows, "db:replacement-created").maxMs).to.be.a("number");
    expect(windows.map((w) => w.name)).to.not.include("db:replacement-scheduled");
    for (const name of ["db:replacement-ready", "db:recovered"]) {
      const w = window(windows, name);
      expect(w.maxMs, name).to.equal(null);
      expect(w.why).to.include("volume node affinity conflict");
      expect(w.why).to.include("a stop fault has no start");
      expect(w.why).to.include("rancher.io/local-path");
    }
    // The same workload on storage that moves recovers.
    const moving = workloadFacts("db", docs(statefulSet("storageClassName: rekindle-shared,")), {
      ...tolerationDefaults(fast),
      storageClasses: KIND_CLASSES,
      volumeAttachRequired: false,
    });
    expect(
      window(expectedWorkloadTimeline(moving, situation(fast, { controller: CONTROLLER })), "db:recovered")
        .maxMs,
    ).to.be.a("number");
  });

  it("a stop with a force delete, or a Deployment with the controller: never recovered either", function () {
    const forced = expectedWorkloadTimeline(
      local(),
      situation(fast, { operator: { action: "force-delete", afterMs: 20_000 } }),
    );
    expect(window(forced, "db:recovered")).to.deep.include({ maxMs: null });
    expect(window(forced, "db:recovered").why).to.include("node affinity");
    const deployment = expectedWorkloadTimeline(
      local("Deployment"),
      situation(fast, { controller: CONTROLLER }),
    );
    expect(window(deployment, "db:recovered")).to.deep.include({ maxMs: null });
  });

  it("a partition that outlasts its toleration and heals: recovered after the heal, on the same node", function () {
    const s = situation(fast, { fault: "partition", durationMs: 90_000 });
    const windows = expectedWorkloadTimeline(local("StatefulSet", TOLERATES_10), s);
    const recovered = window(windows, "db:recovered");
    expect(recovered.after).to.equal("db:replacement-created");
    expect(recovered.why).to.include("once the healed node reports Ready");
    const nominal = nominalWindows(windows, { "fault-injected": 0, [PARTITION_HEALED_MILESTONE]: 90_000 });
    const r = nominal.find((w) => w.name === "db:recovered");
    expect(r?.minMs).to.be.at.least(90_000);
    // A Deployment's replacement, created at the eviction, waits for the heal too.
    const deployment = expectedWorkloadTimeline(local("Deployment", TOLERATES_10), s);
    const d = nominalWindows(deployment, { "fault-injected": 0, [PARTITION_HEALED_MILESTONE]: 90_000 }).find(
      (w) => w.name === "db:recovered",
    );
    expect(d?.minMs).to.be.at.least(90_000);
    expect(window(deployment, "db:recovered").why).to.include("node affinity").and.not.include("never");
  });

  it("a partition the controller fences, or one never healed: not recovered within the run", function () {
    const fenced = expectedWorkloadTimeline(
      local("StatefulSet", TOLERATES_10),
      situation(fast, { fault: "partition", durationMs: 90_000, controller: CONTROLLER }),
    );
    expect(window(fenced, "db:recovered")).to.deep.include({ maxMs: null });
    expect(window(fenced, "db:recovered").why).to.include("the controller fences");
    const endless = expectedWorkloadTimeline(
      local("Deployment", TOLERATES_10),
      situation(fast, { fault: "partition" }),
    );
    expect(window(endless, "db:recovered").why).to.include("the partition is not healed within the run");
  });

  it("a graceful shutdown: ended by the kubelet, then never back within the run", function () {
    const windows = expectedWorkloadTimeline(local(), situation(fast, { fault: "graceful-shutdown" }));
    expect(window(windows, "db:pod-terminated").maxMs).to.be.a("number");
    expect(window(windows, "db:recovered")).to.deep.include({ maxMs: null });
    expect(window(windows, "db:recovered").why).to.include("stays shut down");
  });

  it("memory pressure: back at the latest after the pressure taint is lifted; with no end, no window", function () {
    const lifted = expectedWorkloadTimeline(
      local(),
      situation(fast, { fault: "memory-pressure", durationMs: 20_000 }),
    );
    const recovered = window(lifted, "db:recovered");
    expect(recovered.after).to.equal("fault-injected");
    expect(recovered.why).to.include("pressure taint is lifted");
    // After the relief: the condition's transition period and the taint's removal.
    expect(recovered.maxMs).to.be.greaterThan(20_000 + fast.simKubelet.pressureTransitionPeriodMs);
    const endless = expectedWorkloadTimeline(local(), situation(fast, { fault: "memory-pressure" }));
    expect(endless.map((w) => w.name)).to.not.include("db:recovered");
  });
});

const T0 = 1_000_000;
const LOST = "worker-2";

function podAt(uid: string, atMs: number, name: Transition["name"], node?: string): Transition {
  return {
    name,
    atMs: T0 + atMs,
    subject: { kind: "Pod", name: uid, namespace: "ns", uid },
    ...(node ? { node } : {}),
    detail: { app: "db" },
    pod: { labels: { app: "db" }, claims: [] },
    source: "watch",
  };
}

describe("node-local volumes: milestones of a replacement on the returned node", function () {
  const transitions = [
    podAt("db-0", -5000, "pod-scheduled", LOST),
    podAt("db-0", 20_000, "pod-deletion-requested", LOST),
    podAt("db-0", 92_000, "pod-gone", LOST),
    podAt("db-0b", 92_500, "pod-created"),
    podAt("db-0b", 101_000, "pod-scheduled", LOST),
    podAt("db-0b", 102_000, "pod-ready", LOST),
  ];
  const derive = (ref: WorkloadRef) =>
    deriveNodeLossMilestones(transitions, { faultAtMs: T0, lostNode: LOST, workloads: [ref] });

  it("counts towards recovered when the workload is pinned to its node, not otherwise", function () {
    const pinned = derive({ id: "db", namespace: "ns", matchLabels: { app: "db" }, pinnedToNode: true });
    expect(pinned.find((m) => m.name === "db:recovered")?.atMs).to.equal(102_000);
    expect(pinned.find((m) => m.name === "db:replacement-scheduled")?.atMs).to.equal(101_000);
    const moving = derive({ id: "db", namespace: "ns", matchLabels: { app: "db" } });
    expect(moving.map((m) => m.name)).to.not.include("db:recovered");
  });
});

describe("node-local volumes: budgets and scenario files", function () {
  it("a budget on a milestone expected never is missed with the model's reason", function () {
    const expected: ExpectedMilestone[] = [
      {
        name: "db:recovered",
        after: "fault-injected",
        minMs: 0,
        maxMs: null,
        why: "its volume stays on the lost node",
      },
    ];
    const results = checkBudgets([{ workload: "db", recoveredWithinMs: 45_000, servingWithinMs: 50_000 }], {
      milestones: [],
      transitions: [],
      faultAtMs: T0,
      faultNodes: [LOST],
      workloads: [{ id: "db", namespace: "ns", matchLabels: { app: "db" }, wanted: 1 }],
      expected,
    });
    expect(results[0]).to.deep.include({ passed: false, expectedNever: "its volume stays on the lost node" });
    expect(results[1]?.expectedNever).to.equal(undefined);
    expect(missedBudgetLines(results)[0]).to.equal(
      "budget missed: db recovered within 45 s — measured not recovered, as the model expects: its volume stays on the lost node",
    );
    expect(budgetsExpectedNever([{ workload: "db", recoveredWithinMs: 45_000 }], expected)).to.deep.equal([
      "db recovered within 45 s: the model expects db:recovered never",
    ]);
  });

  it("the database example: recovers on the sim's default class; on kind's local-path default, never within the run", async function () {
    const [file] = loadScenarioFiles([
      join(PROJECT_ROOT, "examples", "database-pdb-controller", "scenario.yaml"),
    ]);
    if (file === undefined) throw new Error("no file");
    const objects = await readWorkloadObjects(file);
    const inputs = listExpectationInputs(fast);
    const recoveredOn = (classes: StorageClassInfo[], attach: boolean) => {
      const facts = fileWorkloadFacts(objects, { ...inputs, volumeAttachRequired: attach }, classes);
      return window(
        fileExpectations(file, facts, { ...inputs, volumeAttachRequired: attach }, "assumed"),
        "postgres:recovered",
      );
    };
    expect(recoveredOn(SIM_CLASSES, true).maxMs).to.be.a("number");
    const onKind = recoveredOn(KIND_CLASSES, false);
    expect(onKind.maxMs).to.equal(null);
    expect(onKind.why).to.include("StorageClass standard (rancher.io/local-path, the default class)");
    expect(budgetsExpectedNever(file.budgets, [onKind])).to.have.length(1);
  });

  it("the local-volume example is node-local on any cluster: its own class and volume", async function () {
    const [file] = loadScenarioFiles([
      join(PROJECT_ROOT, "examples", "local-volume-partition", "scenario.yaml"),
    ]);
    if (file === undefined) throw new Error("no file");
    const objects = await readWorkloadObjects(file);
    for (const classes of [[], SIM_CLASSES, KIND_CLASSES]) {
      const [facts] = fileWorkloadFacts(objects, listExpectationInputs(fast), classes);
      expect(facts?.volume).to.equal("node-local");
    }
    const inputs = listExpectationInputs(upstream);
    const facts = fileWorkloadFacts(objects, inputs);
    const windows = fileExpectations(file, facts, inputs, "assumed");
    // At upstream's timings too, the pod is evicted before the heal and is back after it, within the budget.
    const recovered = nominalWindows(windows).find((w) => w.name === "journal:recovered");
    expect(recovered?.minMs).to.be.at.least(90_000);
    expect(recovered?.maxMs).to.be.at.most(150_000);
    expect(budgetsExpectedNever(file.budgets, windows)).to.deep.equal([]);
  });
});
