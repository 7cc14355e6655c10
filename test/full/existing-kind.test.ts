// Issue 22's proof on a real kubelet: a rekindle-made kind cluster used AS an existing cluster
// (only its kubeconfig; node faults through rekindle's node agent, installed with `rekindle agent
// install`). `rekindle run --provider existing --allow-faults --nodes <one worker>` runs
// node-loss/manual-out-of-service and passes: the node is lost through the agent, and the
// StatefulSet with a volume recovers on another node after the out-of-service taint. Then a run
// is SIGKILLed once the agent applied its fault: the agent reverts it at the run's --fault-deadline
// by itself, the node is Ready again, and `rekindle reap` removes the dead run's record and namespace.
// Storage: kind's default class (local-path) keeps a volume on one node, and rekindle-shared is
// provisioned only inside a `rekindle run --provider kind` process. What works here without any
// rekindle process: pre-made hostPath volumes under the directory kind-config.yaml shares between
// the workers, in a class of their own marked movable (rekindle.dev/node-local: "false").
// REKINDLE_EXISTING_CLUSTER names a kind cluster to reuse (kept after); otherwise one is made and deleted.
import { expect } from "chai";
import { execa } from "execa";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { AGENT_NAMESPACE, requestName } from "../../lib/agent/protocol.js";
import { startKindPowerWebhook } from "../../lib/cluster/kind/power-webhook/server.js";
import { SHARED_NODE_DIR } from "../../lib/cluster/kind/shared-storage.js";
import { JOURNAL_LABEL, JOURNAL_LABEL_VALUE, JOURNAL_NAMESPACE } from "../../lib/fault/record-codec.js";
import { RUN_LABEL } from "../../lib/kube/apply.js";
import { isNotFound, k8s, loadKubeConfig } from "../../lib/kube/client.js";
import { NODE_LOCAL_ANNOTATION } from "../../lib/kube/storage-classes.js";
import type { RunSummary } from "../../lib/report/summary.js";
import { pollUntil } from "../../lib/util/time.js";
import {
  keptKindCluster,
  kindWorkers,
  loadRekindleImage,
  readyWait,
  type ReadyWait,
} from "../support/kind-as-existing.js";
import { kindMissing, prepareKind } from "../support/kind-run.js";
import { requirePrerequisite } from "../support/prerequisites.js";
import { allowFor, REKINDLE_BIN } from "../support/rekindle-run.js";

const IMAGE = "rekindle:existing-it";
const STATIC_CLASS = "shared-static";
const SCENARIO = "node-loss/manual-out-of-service";
/** The shortest --fault-deadline the fast profile allows: grace 10 s + toleration 5 s + 1 min. */
const SHORT_DEADLINE_S = 75;

function log(line: string): void {
  console.log(`      [existing-it] ${line}`);
}

/** A hostPath volume in the workers' shared directory: no node affinity, nothing to attach. */
function staticVolume(index: number): k8s.V1PersistentVolume {
  return {
    metadata: { name: `existing-it-${index}` },
    spec: {
      storageClassName: STATIC_CLASS,
      capacity: { storage: "1Gi" },
      accessModes: ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Retain",
      hostPath: { path: `${SHARED_NODE_DIR}/existing-it-${index}`, type: "DirectoryOrCreate" },
    },
  };
}

describe("kind as an existing cluster: faults through the agent (issue 22's proof)", function () {
  const reused = process.env["REKINDLE_EXISTING_CLUSTER"];
  const cluster = reused ?? "rekindle-existing-it";
  const workers = kindWorkers(cluster);
  const target = workers[2] ?? "";
  // Empty until before() made or found them (after() then has nothing to clean).
  let kind = "";
  let kubeconfig = "";
  let core: k8s.CoreV1Api;
  let until: ReadyWait;

  const cli = (args: readonly string[], timeoutMs = 300_000) =>
    execa(process.execPath, [REKINDLE_BIN, ...args, "--kubeconfig", kubeconfig], {
      reject: false,
      timeout: timeoutMs,
      all: true,
    });
  const runArgs = (reportDir: string, extra: readonly string[]) => [
    "run",
    "--provider",
    "existing",
    "--allow-faults",
    "--nodes",
    target,
    "--profile",
    "fast",
    "--suite",
    "node-loss",
    "--scenario",
    SCENARIO,
    "--no-html",
    "--report-dir",
    reportDir,
    ...extra,
  ];
  const journal = async () =>
    (
      await core.listNamespacedConfigMap({
        namespace: JOURNAL_NAMESPACE,
        labelSelector: `${JOURNAL_LABEL}=${JOURNAL_LABEL_VALUE}`,
      })
    ).items.map((c) => c.metadata?.name ?? "");
  const runNamespaces = async () =>
    (await core.listNamespace({ labelSelector: RUN_LABEL })).items.map((n) => n.metadata?.name ?? "");

  before(async function () {
    requirePrerequisite(this, await kindMissing());
    kind = await prepareKind(this);
    allowFor(this, 25 * 60_000);
    kubeconfig = await keptKindCluster(cluster);
    const kc = loadKubeConfig(kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
    until = readyWait(core);
    for (const node of workers) await until(node, "True", 180_000);
    // On the control plane too: the deployed controller may run there (the agent never does).
    log(await loadRekindleImage(kind, cluster, [...workers, `${cluster}-control-plane`], IMAGE));
    const started = Date.now();
    const install = await cli(["agent", "install", "--image", IMAGE]);
    expect(install.exitCode, install.all).to.equal(0);
    log(`agent install: exit 0 in ${Date.now() - started} ms`);
    await kc.makeApiClient(k8s.StorageV1Api).createStorageClass({
      body: {
        metadata: { name: STATIC_CLASS, annotations: { [NODE_LOCAL_ANNOTATION]: "false" } },
        provisioner: "kubernetes.io/no-provisioner",
        volumeBindingMode: "Immediate",
        reclaimPolicy: "Retain",
      },
    });
    // Retained volumes are not bound again: one for each run below with a StatefulSet volume.
    for (const i of [1, 2, 3, 4, 5, 6]) await core.createPersistentVolume({ body: staticVolume(i) });
  });

  after(async function () {
    allowFor(this, 10 * 60_000);
    // The last test's own uninstall comes first; this one only clears up after a failure.
    if (kubeconfig !== "") await cli(["agent", "uninstall"]);
    if (reused === undefined && kind !== "") {
      await execa(kind, ["delete", "cluster", "--name", cluster]);
      const clusters = await execa(kind, ["get", "clusters"], { reject: false });
      expect(clusters.stdout.split("\n"), "kind clusters left").not.to.include(cluster);
    }
  });

  it("refuses storage a volume cannot move on: rekindle-shared named (exit 2); the cluster's default rekindle-csi, served only inside a kind run, skips, saying why", async function () {
    allowFor(this, 300_000);
    const named = await cli(
      runArgs(mkdtempSync(join(tmpdir(), "existing-it-")), ["--storage-class", "rekindle-shared"]),
    );
    expect(named.exitCode, named.all).to.equal(2);
    expect(named.all).to.include(
      "--storage-class rekindle-shared cannot serve the scenarios' volume: StorageClass rekindle-shared is provisioned only inside a `rekindle run --provider kind` process",
    );
    const reportDir = mkdtempSync(join(tmpdir(), "existing-it-"));
    const byDefault = await cli(runArgs(reportDir, []));
    // Nothing ran: a run of skipped scenarios only is not a pass.
    expect(byDefault.exitCode, byDefault.all).to.equal(1);
    const summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
    expect(summary.skipped).to.deep.equal([
      {
        id: SCENARIO,
        reason:
          "its StatefulSet's volume must be able to follow the pod to another node: StorageClass rekindle-csi is provisioned only inside a `rekindle run --provider kind` process (shared.csi.rekindle.dev), which does not run for an existing cluster, and there is no Available PersistentVolume of the class: its claims would stay Pending (the cluster's default class; name a class whose volumes can follow a pod to another node with --storage-class (or mark one rekindle.dev/node-local: \"false\"))",
      },
    ]);
    expect(await runNamespaces(), "namespaces of a run").to.deep.equal([]);
  });

  it(`${SCENARIO} through the agent: the StatefulSet with a volume recovers after the out-of-service taint`, async function () {
    const reportDir = mkdtempSync(join(tmpdir(), "existing-it-"));
    const started = Date.now();
    const run = await cli(runArgs(reportDir, ["--storage-class", STATIC_CLASS]), allowFor(this, 15 * 60_000));
    if (run.exitCode !== 0) console.log(run.all);
    expect(run.exitCode, "rekindle run exit code").to.equal(0);
    log(`${SCENARIO} on ${target} through the agent: exit 0 in ${Date.now() - started} ms`);
    expect(run.all).to.include(
      "storage:   the StatefulSet's volume from StorageClass shared-static (nothing to attach)",
    );
    expect(run.all).to.match(new RegExp(`applying stop on ${target} \\(agent\\): applied`));
    const summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
    expect(summary.provider).to.equal("existing");
    expect(summary.scenarios.map((s) => [s.id, s.outcome])).to.deep.equal([[SCENARIO, "passed"]]);
    expect(await until(target, "True", 60_000)).to.be.below(60_000);
    expect(await journal(), "fault journal").to.deep.equal([]);
    // Its undo deleted the namespace; the API server finishes that (Terminating) after the run exits.
    await pollUntil(async () => ((await runNamespaces()).length === 0 ? true : undefined), {
      what: "the run's namespace gone",
      timeoutMs: 180_000,
    });
  });

  it("SIGKILLed mid-fault: the agent reverts at the deadline by itself; reap removes the record and the namespace", async function () {
    allowFor(this, 15 * 60_000);
    const reportDir = mkdtempSync(join(tmpdir(), "existing-it-"));
    const child = cli(
      runArgs(reportDir, ["--storage-class", STATIC_CLASS, "--fault-deadline", `${SHORT_DEADLINE_S}s`]),
      10 * 60_000,
    );
    const applied = new RegExp(`applying stop on ${target} \\(agent\\): applied`);
    let output = "";
    await new Promise<void>((resolve, reject) => {
      child.all.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (applied.test(output)) resolve();
      });
      void child.then((r) => {
        reject(new Error(`rekindle run ended before the fault (exit ${r.exitCode}): ${r.all}`));
      });
    });
    const appliedAt = Date.now();
    child.kill("SIGKILL");
    await child;
    log(`rekindle run SIGKILLed once the agent applied the stop on ${target}`);
    const notReady = await until(target, "not True", 120_000);
    const ready = await until(target, "True", (SHORT_DEADLINE_S + 120) * 1000);
    log(
      `${target}: NotReady ${notReady} ms after the kill; Ready again ${Date.now() - appliedAt} ms after the stop was applied (deadline ${SHORT_DEADLINE_S} s), ${ready} ms after NotReady`,
    );
    const request = await core.readNamespacedConfigMap({
      name: requestName(target, "stop"),
      namespace: AGENT_NAMESPACE,
    });
    expect(request.data?.["message"]).to.match(/^reverted at its deadline/);
    // The dead run could not remove its journal record nor its scenario's namespace: reap does.
    const left = await runNamespaces();
    log(`left by the killed run: journal ${(await journal()).join(", ")}; namespaces ${left.join(", ")}`);
    expect(await journal(), "the killed run's record").to.have.length(1);
    expect(left, "the killed run's scenario namespace").to.have.length(1);
    const reap = await cli(["reap"]);
    expect(reap.exitCode, reap.all).to.equal(0);
    expect(reap.all).to.match(new RegExp(`reverted stop of ${target}`));
    expect(reap.all).to.include(`deleted namespace ${left[0] ?? ""}`);
    expect(await journal(), "fault journal after reap").to.deep.equal([]);
    await pollUntil(async () => ((await runNamespaces()).length === 0 ? true : undefined), {
      what: "the killed run's namespace gone",
      timeoutMs: 180_000,
    });
    const again = await cli(["reap"]);
    expect(again.exitCode, again.all).to.equal(0);
    expect(again.all).to.include("fault journal: nothing left by an earlier run");
    expect(await until(target, "True", 10_000)).to.be.below(10_000);
  });

  it("with --fence-config: the controller, in-process and deployed from deploy/controller/, fences through the user's BMC and recovers the StatefulSet with a volume; partitions through the agent, healed before detection and after a fence", async function () {
    allowFor(this, 30 * 60_000);
    // The nodes' "BMC": kind's power webhook on the host, as a user's Redfish or webhook endpoint.
    const actions: string[] = [];
    await using webhook = await startKindPowerWebhook({
      cluster,
      progress: { info: (line) => actions.push(line), phase: () => ({ update: () => {}, end: () => 0 }) },
    });
    const dir = mkdtempSync(join(tmpdir(), "existing-it-fence-"));
    writeFileSync(join(dir, "ca.pem"), webhook.caPem);
    const fenceFile = join(dir, "fence.yaml");
    writeFileSync(
      fenceFile,
      stringify({
        templates: {
          lab: {
            driver: "webhook",
            options: { url: webhook.url, caFile: join(dir, "ca.pem") },
            secretRef: { name: "lab-bmc-token", namespace: "default" },
          },
        },
        defaultTemplate: "lab",
      }),
    );
    await core.createNamespacedSecret({
      namespace: "default",
      body: { metadata: { name: "lab-bmc-token" }, stringData: { token: webhook.token } },
    });
    try {
      const reportDir = mkdtempSync(join(tmpdir(), "existing-it-"));
      const started = Date.now();
      const run = await cli(
        [
          ...runArgs(reportDir, [
            "--storage-class",
            STATIC_CLASS,
            "--fence-config",
            fenceFile,
            "--controller-image",
            IMAGE,
          ]),
          "--suite",
          "partition",
        ].map((arg) => (arg === SCENARIO ? "(node-loss/controller|partition/healed)" : arg)),
        25 * 60_000,
      );
      if (run.exitCode !== 0) console.log(run.all);
      log(
        `controller scenarios through the agent and the webhook: exit ${run.exitCode} in ${Date.now() - started} ms`,
      );
      for (const line of actions.filter((l) => l.includes(": power-"))) log(line);
      expect(run.exitCode, "rekindle run exit code").to.equal(0);
      expect(run.all).to.include(`--node-selector "kubernetes.io/hostname in (${target})"`);
      const summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
      expect(summary.scenarios.map((s) => [s.id, s.outcome]).sort()).to.deep.equal([
        ["node-loss/controller", "passed"],
        ["node-loss/controller-in-cluster", "passed"],
        ["partition/healed-after-fence", "passed"],
        ["partition/healed-before-detection", "passed"],
      ]);
      // The controllers fenced the lost or cut-off node through the user's BMC (node-loss twice, the
      // partition outlasting detection once), and never another node.
      const powered = actions.filter((l) => /: power-(off|on) /.test(l));
      expect(powered.filter((l) => l.includes(`power-off ${target}: done`))).to.have.length(3);
      expect(
        powered.every((l) => l.includes(` ${target}:`)),
        powered.join("\n"),
      ).to.equal(true);
      expect(await until(target, "True", 120_000)).to.be.below(120_000);
      expect(await journal(), "fault journal").to.deep.equal([]);
      const controllerNamespace = await core.readNamespace({ name: "rekindle-system" }).then(
        () => "present",
        (error: unknown) => (isNotFound(error) ? "gone" : String(error)),
      );
      expect(controllerNamespace, "the deployed controller's namespace").to.equal("gone");
    } finally {
      await core
        .deleteNamespacedSecret({ name: "lab-bmc-token", namespace: "default" })
        .catch(() => undefined);
    }
  });

  it("uninstall leaves no agent behind", async function () {
    allowFor(this, 300_000);
    const uninstall = await cli(["agent", "uninstall"]);
    expect(uninstall.exitCode, uninstall.all).to.equal(0);
    const gone = await core.readNamespace({ name: AGENT_NAMESPACE }).then(
      () => false,
      (error: unknown) => isNotFound(error),
    );
    expect(gone, `namespace ${AGENT_NAMESPACE} removed`).to.equal(true);
  });
});
