// rekindle's node agent on a real kind cluster used AS an existing cluster (only its kubeconfig and
// the agent reach the nodes; docker exec only looks): install, node loss and partition through
// agentNodeFaults, the dead-man's switch with rekindle SIGKILLed and with the agent itself killed,
// reap through the agent, and an uninstall that leaves nothing on the API server or the nodes.
// REKINDLE_AGENT_CLUSTER names a kind cluster to reuse (kept after); otherwise one is made and deleted.
import { expect } from "chai";
import { execa } from "execa";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentNodeFaults } from "../../lib/agent/capabilities.js";
import { requestName } from "../../lib/agent/protocol.js";
import type { ExistingNodeFaults } from "../../lib/cluster/provider.js";
import { ConfigMapJournal } from "../../lib/fault/journal.js";
import { FaultInjector } from "../../lib/fault/injector.js";
import { isNotFound, k8s, loadKubeConfig } from "../../lib/kube/client.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { pollUntil } from "../../lib/util/time.js";
import {
  keptKindCluster,
  kindWorkers,
  loadRekindleImage,
  onNode,
  readyWait,
  type ReadyWait,
} from "../support/kind-as-existing.js";
import { kindMissing, prepareKind } from "../support/kind-run.js";
import { requirePrerequisite } from "../support/prerequisites.js";
import { allowFor, REKINDLE_BIN } from "../support/rekindle-run.js";

const IMAGE = "rekindle:agent-it";
const NAMESPACE = "rekindle-agent";

function log(line: string): void {
  console.log(`      [agent-it] ${line}`);
}

describe("rekindle's node agent on kind as an existing cluster", function () {
  const reused = process.env["REKINDLE_AGENT_CLUSTER"];
  const cluster = reused ?? "rekindle-agent-it";
  // Empty until before() made or found them (after() then has nothing to clean).
  let kind = "";
  let kubeconfig = "";
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let faults: ExistingNodeFaults;
  const workers = kindWorkers(cluster);

  const cli = (args: string[], timeoutMs = 300_000) =>
    execa(process.execPath, [REKINDLE_BIN, ...args, "--kubeconfig", kubeconfig], {
      reject: false,
      timeout: timeoutMs,
      all: true,
    });
  let until: ReadyWait;

  before(async function () {
    requirePrerequisite(this, await kindMissing());
    kind = await prepareKind(this);
    allowFor(this, 20 * 60_000);
    kubeconfig = await keptKindCluster(cluster);
    kc = loadKubeConfig(kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
    until = readyWait(core);
    for (const node of workers) await until(node, "True", 180_000);
    log(await loadRekindleImage(kind, cluster, workers, IMAGE));
  });

  after(async function () {
    allowFor(this, 10 * 60_000);
    // The tests' own uninstall comes last; this one only clears up after a failure.
    if (kubeconfig !== "") await cli(["agent", "uninstall"]);
    if (reused === undefined && kind !== "") await execa(kind, ["delete", "cluster", "--name", cluster]);
  });

  it("refuses an image the nodes cannot run: exit 2 naming a node and the pod's reason, nothing left", async function () {
    allowFor(this, 180_000);
    const bad = await cli([
      "agent",
      "install",
      "--image",
      "rekindle:no-such-image",
      "--namespace",
      "agent-bad",
      "--timeout",
      "20",
    ]);
    expect(bad.exitCode, bad.all).to.equal(2);
    expect(bad.all).to.match(
      new RegExp(`${cluster}-worker\\d?: (ErrImageNeverPull|ErrImagePull|ImagePullBackOff)`),
    );
    const gone = await core.readNamespace({ name: "agent-bad" }).then(
      () => false,
      (error: unknown) => isNotFound(error),
    );
    expect(gone, "namespace agent-bad removed").to.equal(true);
  });

  it("refuses a kubeconfig that may not create the agent: exit 2 quoting the RBAC message", async function () {
    allowFor(this, 120_000);
    const account = "rekindle-agent-it-nobody";
    await core.createNamespacedServiceAccount({
      namespace: "default",
      body: { metadata: { name: account } },
    });
    try {
      const token = await core.createNamespacedServiceAccountToken({
        name: account,
        namespace: "default",
        body: { spec: { audiences: [], expirationSeconds: 600 } },
      });
      const current = kc.getCurrentCluster();
      if (current === null) throw new Error("no cluster in the kubeconfig");
      const weak = new k8s.KubeConfig();
      weak.loadFromOptions({
        clusters: [current],
        users: [{ name: account, token: token.status?.token ?? "" }],
        contexts: [{ name: account, cluster: current.name, user: account }],
        currentContext: account,
      });
      const path = join(mkdtempSync(join(tmpdir(), "agent-it-")), "kubeconfig");
      writeFileSync(path, weak.exportConfig());
      const result = await execa(process.execPath, [REKINDLE_BIN, "agent", "install", "--kubeconfig", path], {
        reject: false,
        all: true,
        timeout: 120_000,
      });
      expect(result.exitCode, result.all).to.equal(2);
      expect(result.all).to.match(
        /may not .*forbidden: User "system:serviceaccount:default:rekindle-agent-it-nobody" cannot/,
      );
    } finally {
      await core.deleteNamespacedServiceAccount({ name: account, namespace: "default" });
    }
  });

  it("installs: an agent Ready on every worker and none on the control plane", async function () {
    allowFor(this, 300_000);
    const started = Date.now();
    const install = await cli(["agent", "install", "--image", IMAGE]);
    expect(install.exitCode, install.all).to.equal(0);
    log(`agent install: exit 0 in ${Date.now() - started} ms`);
    expect(install.stdout).to.include(`Ready on 3 node(s): ${workers.join(", ")}`);
    const pods = await core.listNamespacedPod({ namespace: NAMESPACE });
    expect(pods.items.map((p) => p.spec?.nodeName).sort()).to.deep.equal(workers);
    faults = await agentNodeFaults(kc, { progress: consoleProgress(), deadlineMs: 10 * 60_000 });
  });

  it("stops a node's kubelet, runtime and every pod but the agent's: NotReady, the workload's process gone; reverted: Ready, the workload runs again", async function () {
    allowFor(this, 420_000);
    const node = workers[0] ?? "";
    // A workload on that node whose process the node loss must end (a power loss would).
    const workload = "agent-it-writer";
    const running = async () => onNode(node, "pgrep -f '^sleep 3601$' || true");
    await core.createNamespacedPod({
      namespace: "default",
      body: {
        metadata: { name: workload },
        spec: {
          nodeName: node,
          terminationGracePeriodSeconds: 0,
          containers: [
            { name: "w", image: IMAGE, imagePullPolicy: "IfNotPresent", command: ["sleep", "3601"] },
          ],
        },
      },
    });
    try {
      await pollUntil(async () => ((await running()) === "" ? undefined : true), {
        what: "the workload's process on the node",
        timeoutMs: 120_000,
        intervalMs: 500,
      });
      let started = Date.now();
      await faults.lifecycle.stopNode(node);
      log(`stop applied in ${Date.now() - started} ms`);
      expect(await onNode(node, "systemctl is-active kubelet containerd")).to.equal("inactive\ninactive");
      expect(await running(), "the workload's process after the node loss").to.equal("");
      const answer = await core.readNamespacedConfigMap({
        name: requestName(node, "stop"),
        namespace: NAMESPACE,
      });
      log(`the agent's answer: ${answer.data?.["message"] ?? ""}`);
      expect(answer.data?.["message"]).to.match(/stopped kubelet containerd; stopped [1-9]\d* containers/);
      expect(await onNode(node, "pgrep -f '^node /app/dist/lib/agent/daemon-main.js'"), "the agent").to.match(
        /^\d+$/,
      );
      log(`NotReady ${await until(node, "not True", 120_000)} ms after the stop was applied`);
      started = Date.now();
      await faults.lifecycle.startNode(node);
      log(
        `start reverted in ${Date.now() - started} ms; Ready ${await until(node, "True", 120_000)} ms later`,
      );
      expect(await onNode(node, "ls /var/lib/rekindle-agent/faults")).to.equal("");
      started = Date.now();
      await pollUntil(async () => ((await running()) === "" ? undefined : true), {
        what: "the workload to run again after the undo",
        timeoutMs: 180_000,
        intervalMs: 1000,
      });
      log(`the workload runs again ${Date.now() - started} ms after the node was Ready`);
    } finally {
      await core.deleteNamespacedPod({ name: workload, namespace: "default", gracePeriodSeconds: 0 });
    }
  });

  it("partitions a node from the API server while its agent still answers; heals it", async function () {
    allowFor(this, 300_000);
    const node = workers[1] ?? "";
    await faults.partition.partitionNode(node);
    log(`partition: NotReady ${await until(node, "not True", 120_000)} ms after it was applied`);
    // The node's pods still reach other addresses (only the API server's are dropped).
    expect(await onNode(node, "iptables -w -S REKINDLE-AGENT-PARTITION")).to.match(/--dport 6443 -j DROP/);
    const started = Date.now();
    await faults.partition.healNode(node);
    log(
      `heal answered in ${Date.now() - started} ms (through the partition); Ready ${await until(node, "True", 120_000)} ms later`,
    );
    expect(await onNode(node, "iptables -w -S OUTPUT")).to.not.include("REKINDLE");
  });

  it("reverts at the deadline by itself with rekindle SIGKILLed (dead-man's switch)", async function () {
    allowFor(this, 300_000);
    const node = workers[2] ?? "";
    const deadlineMs = 40_000;
    const child = execa(
      process.execPath,
      [
        "--import",
        "tsx",
        join(PROJECT_ROOT, "test", "support", "hold-agent-fault.ts"),
        kubeconfig,
        node,
        "partition",
        String(deadlineMs),
      ],
      { reject: false, cwd: PROJECT_ROOT },
    );
    const sent = Date.now();
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("APPLIED")) resolve();
      });
      void child.then((r) => {
        reject(new Error(`helper ended: ${r.stderr}`));
      });
    });
    child.kill("SIGKILL");
    await child;
    log(`partition applied by a process now SIGKILLed, ${Date.now() - sent} ms after it started`);
    const notReady = await until(node, "not True", 120_000);
    const ready = await until(node, "True", deadlineMs + 60_000);
    const revertedAt = Date.now() - sent;
    log(
      `NotReady after ${notReady} ms; Ready again ${revertedAt} ms after the helper started (deadline ${deadlineMs} ms), ${ready} ms after NotReady`,
    );
    const request = await core.readNamespacedConfigMap({
      name: requestName(node, "partition"),
      namespace: NAMESPACE,
    });
    expect(request.data?.["state"]).to.equal("reverted");
    expect(request.data?.["message"]).to.match(/^reverted at its deadline/);
    expect(await onNode(node, "iptables -w -S OUTPUT")).to.not.include("REKINDLE");
    await core.deleteNamespacedConfigMap({ name: requestName(node, "partition"), namespace: NAMESPACE });
  });

  it("reverts at the deadline with the agent itself killed: the node's systemd timer", async function () {
    allowFor(this, 300_000);
    const node = workers[0] ?? "";
    const deadlineMs = 30_000;
    const short = await agentNodeFaults(kc, { deadlineMs });
    const applied = Date.now();
    await short.lifecycle.stopNode(node);
    // The agent's process, by its id: with the kubelet and runtime stopped nothing restarts it.
    const pid = await onNode(node, "pgrep -f '^node /app/dist/lib/agent/daemon-main.js'");
    expect(pid, "the agent's pid").to.match(/^\d+$/);
    await onNode(node, `kill -9 ${pid}`);
    log(`stop applied, agent (pid ${pid}) killed`);
    await until(node, "not True", 120_000);
    await until(node, "True", deadlineMs + 90_000);
    log(
      `Ready again ${Date.now() - applied} ms after the stop (deadline ${deadlineMs} ms, timer at deadline + 5 s)`,
    );
    expect(
      await onNode(node, "journalctl -u rekindle-agent-revert-stop --no-pager | grep -c Started || true"),
    ).to.not.equal("0");
    // The agent, restarted by the kubelet, finds the fault past due and forgets it.
    await pollUntil(
      async () => ((await onNode(node, "ls /var/lib/rekindle-agent/faults")) === "" ? true : undefined),
      {
        what: "the restarted agent to forget the fault",
        timeoutMs: 60_000,
      },
    );
    await short.lifecycle.startNode(node);
  });

  it("a restarted agent resumes the fault's deadline from the node and reverts it then", async function () {
    allowFor(this, 300_000);
    const node = workers[1] ?? "";
    const deadlineMs = 40_000;
    const short = await agentNodeFaults(kc, { deadlineMs });
    const applied = Date.now();
    await short.partition.partitionNode(node);
    // Killed by its id; the kubelet (partitioned, not stopped) starts the container again.
    const pid = await onNode(node, "pgrep -f '^node /app/dist/lib/agent/daemon-main.js'");
    expect(pid, "the agent's pid").to.match(/^\d+$/);
    await onNode(node, `kill -9 ${pid}`);
    const restarted = await pollUntil(
      async () => {
        const now = await onNode(node, "pgrep -f '^node /app/dist/lib/agent/daemon-main.js'");
        return /^\d+$/.test(now) && now !== pid ? now : undefined;
      },
      { what: "the agent to run again", timeoutMs: 60_000, intervalMs: 500 },
    );
    log(`agent pid ${pid} killed; pid ${restarted} ${Date.now() - applied} ms after the partition`);
    await until(node, "not True", 120_000);
    await until(node, "True", deadlineMs + 60_000);
    log(`Ready again ${Date.now() - applied} ms after the partition (deadline ${deadlineMs} ms)`);
    // The new agent reverted it (and said so): not the systemd timer, which answers nobody.
    const request = await core.readNamespacedConfigMap({
      name: requestName(node, "partition"),
      namespace: NAMESPACE,
    });
    expect(request.data?.["message"]).to.match(/^reverted at its deadline/);
    await short.partition.healNode(node);
  });

  it("rekindle reap reverts a dead run's fault through the agent", async function () {
    allowFor(this, 300_000);
    const node = workers[1] ?? "";
    const runId = "agent-it-reap";
    const injector = new FaultInjector({
      capabilities: faults,
      runId,
      undo: { registerUndo: () => undefined },
      journal: ConfigMapJournal.forCluster(kc),
      locator: { provider: "existing", agentNamespace: NAMESPACE },
      holder: { host: "gone.example", pid: 1 },
    });
    await injector.inject({ action: { kind: "partition" }, nodes: [node], deadlineMs: 600_000 });
    await until(node, "not True", 120_000);
    const started = Date.now();
    const reap = await cli(["reap", "--run-id", runId]);
    expect(reap.exitCode, reap.all).to.equal(0);
    log(`reap: exit 0 in ${Date.now() - started} ms; Ready ${await until(node, "True", 120_000)} ms later`);
    expect(await onNode(node, "iptables -w -S OUTPUT")).to.not.include("REKINDLE");
  });

  it("uninstall reverts what the agents hold and leaves nothing on the API server or the nodes", async function () {
    allowFor(this, 300_000);
    const node = workers[2] ?? "";
    await faults.partition.partitionNode(node);
    const started = Date.now();
    const uninstall = await cli(["agent", "uninstall"]);
    expect(uninstall.exitCode, uninstall.all).to.equal(0);
    log(`agent uninstall with one partition held: exit 0 in ${Date.now() - started} ms`);
    expect(uninstall.stdout).to.include(`reverted: ${node} partition`);
    await until(node, "True", 120_000);
    const gone = (read: Promise<unknown>) =>
      read.then(
        () => false,
        (error: unknown) => isNotFound(error),
      );
    expect(await gone(core.readNamespace({ name: NAMESPACE })), "namespace").to.equal(true);
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    expect(
      await gone(
        rbac.readNamespacedRole({ name: "rekindle-agent-apiserver-endpoints", namespace: "default" }),
      ),
    ).to.equal(true);
    for (const worker of workers) {
      expect(
        await onNode(
          worker,
          "ls -d /var/lib/rekindle-agent 2>/dev/null; iptables -w -S | grep -c REKINDLE; systemctl list-timers --all --no-legend | grep -c rekindle",
        ),
        worker,
      ).to.equal("0\n0");
    }
  });
});
