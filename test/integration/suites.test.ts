// The conformance suites beyond node loss, end to end through `rekindle run` on the sim provider
// (fast profile); the existing provider against a cluster it did not create; and Ctrl-C in the
// middle of a scenario, which must undo the fault before exiting.
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { expect } from "chai";
import { execa } from "execa";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  installSharedStorageClass,
  SHARED_NODE_DIR,
  SHARED_STORAGE_CLASS,
  startSharedProvisioner,
} from "../../lib/cluster/kind/shared-storage.js";
import { SimCluster } from "../../lib/cluster/sim/cluster.js";
import { k8s, nodeConditionStatus } from "../../lib/kube/client.js";
import { RUN_LABEL } from "../../lib/kube/apply.js";
import type { RunSummary, ScenarioSummary } from "../../lib/report/summary.js";
import { findProcessesByRunTag } from "../../lib/util/daemon.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import { gateSimRun, passedScenariosOf, type GateSimRun } from "../support/gate-sim-run.js";
import { readRunSummary } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";

const bin = join(PROJECT_ROOT, "bin", "rekindle.js");

function scenario(summary: RunSummary, id: string): ScenarioSummary {
  const found = summary.scenarios.find((s) => s.id === id);
  expect(found, `scenario ${id} in summary.json`).to.not.equal(undefined);
  return found as ScenarioSummary;
}

function at(s: ScenarioSummary, milestone: string): number | undefined {
  return s.milestones.find((m) => m.name === milestone)?.atMs;
}

function names(s: ScenarioSummary): string[] {
  return s.milestones.map((m) => m.name);
}

describe("suite families on the sim provider (fast profile), side by side with safety and zone-disruption", function () {
  let reportDir = "";
  let summary: RunSummary;
  let stdout = "";
  let run: GateSimRun;

  before(async function () {
    run = await gateSimRun(this);
    ({ reportDir, summary, stdout } = run);
  });

  it("the run of every gate family passes as a whole: exit 0, nothing skipped, a PASS line per scenario", function () {
    expect(run.exitCode, run.output).to.equal(0);
    expect(summary.skipped).to.deep.equal([]);
    for (const s of summary.scenarios) expect(stdout).to.include(`PASS  ${s.id}`);
    expect(stdout).to.match(new RegExp(`^scenarios: ${summary.scenarios.length} passed, 0 failed$`, "m"));
  });

  it("runs every scenario of these families, all passing, in the serial run's order", function () {
    const families = [
      "preflight",
      "node-pressure",
      "partition",
      "zone-outage",
      "controller-failover",
      "graceful-shutdown",
    ];
    const ours = families.flatMap((f) => passedScenariosOf(run, f));
    expect(ours.map((s) => s.id)).to.deep.equal([
      "preflight/node-heartbeats",
      "node-pressure/memory",
      "node-pressure/disk",
      "partition/healed-before-detection",
      "partition/healed-after-fence",
      "zone-outage/guard-holds",
      "controller-failover/leader-killed-mid-fence",
      "graceful-shutdown/no-fence",
    ]);
  });

  it("node pressure: condition, taint, every pod evicted in the kubelet's order (a fill is no pod), no fence", function () {
    for (const [kind, condition] of [
      ["memory", "MemoryPressure"],
      ["disk", "DiskPressure"],
    ] as const) {
      const s = scenario(summary, `node-pressure/${kind}`);
      const bestEffort = at(s, "evicted:pressure-besteffort") ?? Number.NaN;
      const burstable = at(s, "evicted:pressure-burstable") ?? Number.NaN;
      const guaranteed = at(s, "evicted:pressure-guaranteed") ?? Number.NaN;
      expect(bestEffort, kind).to.be.at.most(burstable);
      expect(burstable, kind).to.be.at.most(guaranteed);
      // One after the other, as the kubelet looks again once an evicted pod is cleaned up: not a
      // monitoring interval apart (the sim used to wait one).
      expect(guaranteed - bestEffort, kind).to.be.below(
        2 * TIMING_PROFILES.fast.simKubelet.monitoringIntervalMs,
      );
      expect(names(s)).to.include.members([
        `node-condition:${condition}:True`,
        `taint-added:node.kubernetes.io/${kind}-pressure`,
        "besteffort:recovered",
        `node-condition:${condition}:False`,
        `taint-removed:node.kubernetes.io/${kind}-pressure`,
      ]);
      expect(names(s)).to.not.include("any-node:event:FenceStarted");
    }
  });

  it("partition: a short one changes nothing; a long one is fenced and the node returns clean", function () {
    const short = scenario(summary, "partition/healed-before-detection");
    expect(names(short)).to.include("partition-healed");
    for (const never of [
      "node-ready-unknown",
      "deployment:pod-deletion-requested",
      "any-node:event:FenceStarted",
      "taint-added:node.kubernetes.io/out-of-service",
    ]) {
      expect(names(short)).to.not.include(never);
    }
    const long = scenario(summary, "partition/healed-after-fence");
    const tainted = at(long, "taint-added:node.kubernetes.io/out-of-service") ?? Number.NaN;
    const released = at(long, "statefulset:pod-gone") ?? Number.NaN;
    const untainted = at(long, "taint-removed:node.kubernetes.io/out-of-service") ?? Number.NaN;
    expect(at(long, "fence:power-management:done")).to.be.at.most(tainted);
    expect(tainted).to.be.at.most(released);
    // Lifted only once the node is back: powered on, and Ready again if it ever went Unknown.
    expect(at(long, "node-powered-on")).to.be.at.most(untainted);
    const readyAgain = at(long, "node-ready-again");
    if (readyAgain !== undefined) expect(readyAgain).to.be.at.most(untainted);
    expect(names(long)).to.not.include("statefulset:duplicate-ready");
  });

  it("zone outage: both nodes of the zone held by the guard, nothing fenced", function () {
    const s = scenario(summary, "zone-outage/guard-holds");
    expect(names(s)).to.include.members(["guard-held:node-1", "guard-held:node-2"]);
    expect(names(s)).to.not.include("any-node:event:FenceStarted");
    expect(names(s)).to.not.include("taint-added:node.kubernetes.io/out-of-service");
  });

  it("controller failover: the standby taints after the leader dies, with a single fence", function () {
    const s = scenario(summary, "controller-failover/leader-killed-mid-fence");
    const killed = at(s, "leader-killed") ?? Number.NaN;
    expect(at(s, "fence:power-management:done")).to.be.at.most(killed);
    expect(at(s, "taint-added:node.kubernetes.io/out-of-service")).to.be.above(killed);
    expect(names(s)).to.include("statefulset:recovered");
    expect(names(s)).to.not.include("fence-started-twice");
  });

  it("graceful shutdown: pods terminated by the node, workloads back elsewhere; a fence only for a volume still reported", function () {
    const s = scenario(summary, "graceful-shutdown/no-fence");
    expect(names(s)).to.include.members([
      "node-not-ready",
      "statefulset:pod-terminated",
      "deployment:pod-terminated",
      "statefulset:recovered",
      "deployment:recovered",
    ]);
    // The kubelet spoke first: NotReady, then its pods ended in the runtime's time, Unknown only
    // once the node had been silent.
    const notReady = at(s, "node-not-ready") ?? Number.NaN;
    expect(at(s, "deployment:pod-terminated")).to.be.above(notReady);
    expect(at(s, "statefulset:pod-terminated")).to.be.above(notReady);
    expect(notReady).to.be.below(at(s, "node-ready-unknown") ?? Number.NaN);
    expect(at(s, "statefulset:recovered")).to.be.below(60_000);
    if (names(s).includes("volumes-in-use-cleared")) {
      // A status write came between the pods' end and the power-off: the volume detached without
      // a 6-minute wait, and there was nothing to fence.
      expect(names(s)).to.include("event:NothingToRelease");
      expect(names(s)).to.not.include("any-node:event:FenceStarted");
    } else {
      // The kubelet halted still reporting the volume in use, as on kind: the attach-detach
      // controller holds it, and only the controller's fence, after the node's last renewal, lets
      // it go (the notice at the power-off is not acted on: the node had said it was shutting down).
      expect(names(s)).to.include.members([
        "multi-attach",
        "any-node:event:FenceStarted",
        "taint-added:node.kubernetes.io/out-of-service",
        "statefulset:va-gone",
      ]);
      expect(at(s, "any-node:event:FenceStarted")).to.be.above(
        at(s, "statefulset:pod-terminated") ?? Number.NaN,
      );
    }
  });

  it("junit.xml has a passing testcase per scenario", function () {
    const xml = readFileSync(join(reportDir, "junit.xml"), "utf8");
    for (const s of summary.scenarios) expect(xml).to.include(`name="${s.id}"`);
    expect(xml).to.include('failures="0"');
  });
});

describe("the existing provider (a cluster rekindle did not create)", function () {
  let cluster: SimCluster | undefined;
  const reportDir = join(testRunDir("existing"), "report");

  before(async function () {
    cluster = await SimCluster.start({
      name: "it-existing",
      root: join(testRunDir("existing"), "cluster"),
      profile: TIMING_PROFILES.fast,
      progress: consoleProgress(),
    });
  });

  after(async function () {
    await cluster?.destroy();
  });

  it("runs the read-only preflight, skips every node fault with the reason, and leaves the cluster as it was", async function () {
    const kc = cluster!.kubeConfig();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const nodesBefore = (await core.listNode()).items.map((n) => ({
      name: n.metadata?.name,
      taints: n.spec?.taints ?? [],
    }));
    const run = await execa(
      process.execPath,
      [
        bin,
        "run",
        "--provider",
        "existing",
        "--kubeconfig",
        cluster!.kubeconfigPath,
        "--profile",
        "fast",
        "--no-html",
        "--report-dir",
        reportDir,
      ],
      { reject: false, timeout: 300_000 },
    );
    expect(run.exitCode, `${run.stdout}\n${run.stderr.slice(-3000)}`).to.equal(0);
    expect(run.stderr).to.include("provider  existing: existing cluster, context");
    const summary = readRunSummary(reportDir);
    expect(summary.provider).to.equal("existing");
    expect(summary.scenarios.map((s) => [s.id, s.outcome])).to.deep.equal([
      ["preflight/node-heartbeats", "passed"],
    ]);
    const skipped = summary.skipped ?? [];
    expect(skipped.map((s) => s.id)).to.include.members([
      "node-loss/baseline",
      "node-loss/controller",
      "node-pressure/memory",
      "partition/healed-after-fence",
      "zone-outage/guard-holds",
      "controller-failover/leader-killed-mid-fence",
      "graceful-shutdown/no-fence",
    ]);
    // Node faults: not without --allow-faults; the control plane: never (each says why).
    for (const s of skipped) expect(s.reason, s.id).to.include("a cluster it did not create");
    expect(readFileSync(join(reportDir, "junit.xml"), "utf8")).to.include("<skipped message=");
    expect(run.stdout).to.include("SKIP  node-loss/baseline");
    // Untouched: same taints on every node, every node Ready, no namespace of the run left.
    const nodesAfter = (await core.listNode()).items;
    expect(nodesAfter.map((n) => ({ name: n.metadata?.name, taints: n.spec?.taints ?? [] }))).to.deep.equal(
      nodesBefore,
    );
    for (const node of nodesAfter) expect(nodeConditionStatus(node, "Ready")).to.equal("True");
    // Fails with a timeout if any namespace of the run is still there after a minute.
    await pollUntil(
      async () => {
        const namespaces = (await core.listNamespace({ labelSelector: RUN_LABEL })).items;
        return namespaces.length === 0 ? true : undefined;
      },
      { what: "the run's namespaces deleted", timeoutMs: 60_000 },
    );
  });

  it("kind's shared StorageClass (run here against this API server) binds claims to hostPath volumes with no node affinity, and deletes them", async function () {
    const kc = cluster!.kubeConfig();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await installSharedStorageClass(kc);
    await installSharedStorageClass(kc); // idempotent
    const provisioner = startSharedProvisioner(kc);
    try {
      await core.createNamespace({ body: { metadata: { name: "shared-storage" } } });
      await core.createNamespacedPersistentVolumeClaim({
        namespace: "shared-storage",
        body: {
          metadata: { name: "data" },
          spec: {
            storageClassName: SHARED_STORAGE_CLASS,
            accessModes: ["ReadWriteOnce"],
            resources: { requests: { storage: "1Gi" } },
          },
        },
      });
      const claim = await pollUntil(
        async () => {
          const c = await core.readNamespacedPersistentVolumeClaim({
            namespace: "shared-storage",
            name: "data",
          });
          return c.status?.phase === "Bound" ? c : undefined;
        },
        { what: "the claim Bound", timeoutMs: 30_000 },
      );
      const volume = await core.readPersistentVolume({ name: claim.spec?.volumeName ?? "" });
      expect(volume.spec?.hostPath?.path).to.equal(`${SHARED_NODE_DIR}/pvc-${claim.metadata?.uid ?? ""}`);
      expect(volume.spec?.nodeAffinity).to.equal(undefined);
      expect(volume.spec?.csi).to.equal(undefined);
      await core.deleteNamespacedPersistentVolumeClaim({ namespace: "shared-storage", name: "data" });
      await pollUntil(
        async () =>
          (await core.listPersistentVolume()).items.some((v) => v.metadata?.name === volume.metadata?.name)
            ? undefined
            : true,
        { what: `${volume.metadata?.name ?? ""} deleted after its claim`, timeoutMs: 30_000 },
      );
    } finally {
      await provisioner.stop();
      await core.deleteNamespace({ name: "shared-storage" }).catch(() => undefined);
    }
  });

  it("fails clearly on a kubeconfig that does not exist or a context it does not have", async function () {
    const missing = await execa(
      process.execPath,
      [bin, "run", "--provider", "existing", "--kubeconfig", "/nope"],
      {
        reject: false,
      },
    );
    expect(missing.exitCode).to.equal(2);
    expect(missing.stderr).to.include("kubeconfig /nope does not exist");
    const badContext = await execa(
      process.execPath,
      [bin, "run", "--provider", "existing", "--kubeconfig", cluster!.kubeconfigPath, "--context", "nope"],
      { reject: false },
    );
    expect(badContext.exitCode).to.equal(2);
    expect(badContext.stderr).to.include('unknown context "nope"');
  });
});

describe("Ctrl-C during a scenario", function () {
  const reportDir = join(testRunDir("run-sigint"), "report");
  const clusterRoot = join(reportDir, "cluster");

  after(async function () {
    // The run keeps its cluster (--keep-cluster): remove it whatever happened.
    if (existsSync(join(clusterRoot, "state.json"))) await SimCluster.open(clusterRoot).destroy();
  });

  it("undoes the fault (node restarted, controller's taints lifted, namespace deleted) before exiting 130", async function () {
    const child = execa(
      process.execPath,
      [
        bin,
        "run",
        "--provider",
        "sim",
        "--suite",
        "node-loss",
        "--scenario",
        "node-loss/controller",
        "--profile",
        "fast",
        "--keep-cluster",
        "--no-html",
        "--report-dir",
        reportDir,
      ],
      { reject: false, buffer: false },
    );
    let stderr = "";
    await new Promise<void>((resolve, reject) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (/\[controller \S+\] fencing \S+: Lease not renewed/.test(stderr)) resolve();
      });
      void child.then(() => {
        reject(new Error(`rekindle run exited before the controller fenced:\n${stderr.slice(-3000)}`));
      });
    });
    // Interrupt once the controller has fenced and tainted the lost node (about a second after it
    // starts the fence), well before the workloads are back (about 5 s after): the most there is
    // to undo. A fixed delay from the fault raced the whole scenario's end (10 s on fast).
    await sleep(1_500);
    child.kill("SIGINT");
    const result = await child;
    expect(result.exitCode, stderr.slice(-3000)).to.equal(130);
    expect(stderr).to.include("interrupted: undoing the current scenario");
    const kept = SimCluster.open(clusterRoot);
    const kc = kept.kubeConfig();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    expect(kept.status().nodes.map((n) => n.power)).to.deep.equal(["running", "running", "running"]);
    for (const node of (await core.listNode()).items) {
      expect(nodeConditionStatus(node, "Ready"), node.metadata?.name).to.equal("True");
      // Each taint on its own: "not include.members" of both would pass with one of them left behind.
      const taints = (node.spec?.taints ?? []).map((t) => t.key);
      expect(taints, node.metadata?.name).to.not.include("node.kubernetes.io/out-of-service");
      expect(taints, node.metadata?.name).to.not.include("rekindle.dev/fencing");
    }
    const namespaces = (await core.listNamespace({ labelSelector: RUN_LABEL })).items;
    for (const ns of namespaces) expect(ns.status?.phase, ns.metadata?.name).to.equal("Terminating");
    const runId = kept.runId;
    await kept.destroy();
    expect(findProcessesByRunTag(runId)).to.deep.equal([]);
  });
});
