// The kind provider against a real Docker Engine with stand-in node containers (busybox imported
// locally, labelled like kind's nodes; nothing is pulled), and the real kind CLI built from its
// Go module: node faults, pressure fills, worker listing, reuse, and `kind create cluster` with
// our rendered config getting past config validation and leaving nothing behind.
import { expect } from "chai";
import { execa } from "execa";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KindCli } from "../../lib/cluster/kind/cli.js";
import { KindCluster } from "../../lib/cluster/kind/cluster.js";
import { probeUnsupported, reusedLeaseMismatch, startKindCluster } from "../../lib/cluster/kind/start.js";
import { DEFAULT_KIND_CONFIG, renderKindConfig } from "../../lib/cluster/kind/config.js";
import { fixedFill } from "../../lib/cluster/kind/fill.js";
import { KindNodes } from "../../lib/cluster/kind/nodes.js";
import { MiB } from "../../lib/cluster/kind/quantity.js";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { RekindleError } from "../../lib/errors.js";
import type { Progress } from "../../lib/util/progress.js";
import {
  privilegedExecWorks,
  removeStandInNodes,
  startStandInControlPlane,
  startStandInNodes,
  STAND_IN_TOOLS_IMAGE,
} from "../support/docker.js";
import { ensureKindBinary, PINNED_KIND_VERSION } from "../support/kind-cli.js";
import { dockerMissing, requirePrerequisite } from "../support/prerequisites.js";

// Not the names of test/full's real kind clusters: this file removes its stand-ins' containers by
// cluster name first, which would kill a real cluster's nodes of a test:slow running beside the gate.
const CLUSTER = "rekindle-it-standin";
const NO_MOUNT_CLUSTER = "rekindle-it-standin-nomount";
const CREATE_CLUSTER = "rekindle-it-standin-create";
const FILL_BYTES = 32 * MiB;
/** kind-config.yaml with a 1 s shutdownGracePeriod, so the shutdown test waits 31 s, not 60. */
const SHORT_GRACE_SOURCE = readFileSync(DEFAULT_KIND_CONFIG, "utf8").replaceAll(
  "shutdownGracePeriod: 30s",
  "shutdownGracePeriod: 1s",
);

async function inspectState(name: string): Promise<{ Running: boolean; Paused: boolean; ExitCode: number }> {
  const { stdout } = await execa("docker", ["inspect", "--format", "{{json .State}}", name]);
  return JSON.parse(stdout) as { Running: boolean; Paused: boolean; ExitCode: number };
}

async function restartPolicy(name: string): Promise<unknown> {
  const { stdout } = await execa("docker", [
    "inspect",
    "--format",
    "{{json .HostConfig.RestartPolicy}}",
    name,
  ]);
  return JSON.parse(stdout) as unknown;
}

async function inNode(name: string, script: string): Promise<{ exitCode: number; stdout: string }> {
  const result = await execa("docker", ["exec", name, "sh", "-c", script], { reject: false });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout };
}

async function containersOf(cluster: string): Promise<string[]> {
  const { stdout } = await execa("docker", [
    "ps",
    "-a",
    "--format",
    "{{.Names}}",
    "--filter",
    `label=io.x-k8s.kind.cluster=${cluster}`,
  ]);
  return stdout.split("\n").filter(Boolean).sort();
}

function recordingProgress(lines: string[]): Progress {
  return {
    info: (message) => lines.push(message),
    phase: (name) => {
      lines.push(name);
      return { update: (m) => lines.push(`${name}: ${m}`), end: () => 0 };
    },
  };
}

async function rejected(promise: Promise<unknown>): Promise<RekindleError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected a RekindleError").to.be.instanceOf(RekindleError);
  return error as RekindleError;
}

function standInCluster(name: string, options: { maxFillBytes?: number } = {}): KindCluster {
  return new KindCluster({
    name,
    runId: "kind-it",
    profile: TIMING_PROFILES.fast,
    config: renderKindConfig(SHORT_GRACE_SOURCE, TIMING_PROFILES.fast, { name }),
    kubeconfigPath: undefined,
    created: false,
    cli: new KindCli(),
    nodes: new KindNodes(name),
    fillPlanner: fixedFill(FILL_BYTES),
    // Stand-ins run no kubelet to show a small node to.
    smallNode: null,
    // Stand-ins run no systemd; `true` stands for "the kubelet unit is active".
    agentProbe: ["true"],
    ...(options.maxFillBytes !== undefined ? { maxFillBytes: options.maxFillBytes } : {}),
  });
}

describe("kind provider (real Docker Engine, stand-in kind nodes, real kind CLI)", function () {
  let kind: string;
  let stateDir: string;
  let cluster: KindCluster;

  let started = false;

  before(async function () {
    requirePrerequisite(this, await dockerMissing());
    started = true;
    kind = await ensureKindBinary();
    stateDir = mkdtempSync(join(tmpdir(), "rekindle-kind-it-"));
    for (const name of [CLUSTER, NO_MOUNT_CLUSTER, CREATE_CLUSTER]) await removeStandInNodes(name);
    await startStandInControlPlane(CLUSTER);
    await startStandInNodes(CLUSTER, 3, { image: STAND_IN_TOOLS_IMAGE, canMount: true });
    await startStandInNodes(NO_MOUNT_CLUSTER, 1, { image: STAND_IN_TOOLS_IMAGE });
    cluster = standInCluster(CLUSTER);
  });

  after(async function () {
    if (!started) return;
    for (const name of [CLUSTER, NO_MOUNT_CLUSTER, CREATE_CLUSTER]) await removeStandInNodes(name);
    rmSync(stateDir, { recursive: true, force: true });
  });

  describe("node operations", function () {
    it("lists the workers by role label, sorted, without the control plane", async function () {
      expect(await cluster.workerNodes()).to.deep.equal([
        `${CLUSTER}-worker`,
        `${CLUSTER}-worker2`,
        `${CLUSTER}-worker3`,
      ]);
    });

    it("stopNode kills the container (SIGKILL); startNode runs it again", async function () {
      const node = `${CLUSTER}-worker`;
      await cluster.stopNode(node);
      const stopped = await inspectState(node);
      expect(stopped.Running).to.equal(false);
      expect(stopped.ExitCode).to.equal(137); // 128 + SIGKILL
      await cluster.stopNode(node); // idempotent
      const partition = await rejected(cluster.partitionNode(node));
      expect(partition.message).to.equal(`cannot partition node ${node}: its container is exited`);
      // The engine's own refusal comes back as a RekindleError naming the node.
      const exec = await rejected(cluster.applyPressure(node, "disk"));
      expect(exec.code).to.equal("COMMAND_FAILED");
      expect(exec.message).to.match(
        new RegExp(
          // The first command pressure runs (the small-node check since kind-pressure) is refused.
          `^running sh -c test -e /var/.*on node ${node} failed: .*is not running`,
        ),
      );
      await cluster.startNode(node);
      expect((await inspectState(node)).Running).to.equal(true);
      await cluster.startNode(node); // idempotent
      expect((await inspectState(`${CLUSTER}-worker2`)).Running).to.equal(true);
    });

    it("partitionNode pauses the container (frozen), healNode unpauses it", async function () {
      const node = `${CLUSTER}-worker2`;
      await cluster.partitionNode(node);
      expect(await inspectState(node)).to.include({ Running: true, Paused: true });
      await cluster.partitionNode(node); // idempotent
      await cluster.healNode(node);
      expect(await inspectState(node)).to.include({ Running: true, Paused: false });
      await cluster.healNode(node); // idempotent
      expect((await inNode(node, "true")).exitCode).to.equal(0);
    });

    it("stopNode on a partitioned node kills it frozen: nothing in it runs again on the way down", async function () {
      const node = `${CLUSTER}-worker2`;
      // A process writing a line to the container's log every 50 ms.
      await execa("docker", [
        "exec",
        "-d",
        node,
        "sh",
        "-c",
        "i=0; while :; do i=$((i+1)); echo tick-$i >/proc/1/fd/1; usleep 50000; done",
      ]);
      const ticks = async () =>
        (await execa("docker", ["logs", node])).stdout.split("\n").filter((line) => line.startsWith("tick-"))
          .length;
      await new Promise((resolve) => setTimeout(resolve, 500));
      await cluster.partitionNode(node);
      // The engine's log copier is not frozen: give it time to take in what was written before.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const whileFrozen = await ticks();
      expect(whileFrozen, "the writer ran before the partition").to.be.greaterThan(0);
      await cluster.stopNode(node);
      expect((await inspectState(node)).Running).to.equal(false);
      // Thawed to be killed (as docker stop and docker kill do), it wrote 1–12 more lines here.
      expect(await ticks(), "lines written after the freeze").to.equal(whileFrozen);
      await cluster.startNode(node);
      expect((await inspectState(node)).Running).to.equal(true);
    });

    it("shutdownNode asks the node's logind to power off: a node without systemctl is refused, left running, its restart policy kept", async function () {
      const node = `${CLUSTER}-worker3`;
      const policyBefore = await restartPolicy(node);
      expect(policyBefore).to.deep.include({ Name: "on-failure" });
      const error = await rejected(cluster.shutdownNode(node));
      expect(error.code).to.equal("COMMAND_FAILED");
      expect(error.message).to.match(
        new RegExp(`^node ${node} cannot power off through systemd-logind: systemctl poweroff exited \\d+`),
      );
      expect((await inspectState(node)).Running).to.equal(true);
      expect(await restartPolicy(node)).to.deep.equal(policyBefore);
    });

    it("refuses the control plane and unknown nodes, naming the workers", async function () {
      const controlPlane = await rejected(cluster.stopNode(`${CLUSTER}-control-plane`));
      expect(controlPlane.code).to.equal("INVALID_INPUT");
      // The valid names, then at most a did-you-mean (RekindleError.invalidInput).
      expect(controlPlane.message).to.match(
        new RegExp(
          `^unknown worker node "${CLUSTER}-control-plane"; valid: ${CLUSTER}-worker, ${CLUSTER}-worker2, ${CLUSTER}-worker3(; did you mean [^;]+\\?)?$`,
        ),
      );
      expect((await inspectState(`${CLUSTER}-control-plane`)).Running).to.equal(true);
      expect((await rejected(cluster.partitionNode("nope"))).code).to.equal("INVALID_INPUT");
    });

    it("finds no system D-Bus in the node, so graceful shutdown is stated unsupported", async function () {
      const unsupported = await probeUnsupported(new KindNodes(CLUSTER), `${CLUSTER}-worker`);
      expect(unsupported["graceful-shutdown"]).to.match(/has no system D-Bus/);
    });
  });

  it("warns when a reused cluster's kubelet lease is not the profile's", async function () {
    const node = `${CLUSTER}-worker3`;
    const nodes = new KindNodes(CLUSTER);
    expect(await reusedLeaseMismatch(nodes, node, TIMING_PROFILES.fast)).to.equal(undefined); // no file
    await inNode(
      node,
      "mkdir -p /var/lib/kubelet && printf 'nodeLeaseDurationSeconds: 40\\n' > /var/lib/kubelet/config.yaml",
    );
    expect(await reusedLeaseMismatch(nodes, node, TIMING_PROFILES.default)).to.equal(undefined);
    expect(await reusedLeaseMismatch(nodes, node, TIMING_PROFILES.fast)).to.match(
      /has nodeLeaseDurationSeconds 40, profile fast expects 8/,
    );
    await inNode(node, "rm -rf /var/lib/kubelet");
  });

  describe("pressure", function () {
    const node = `${CLUSTER}-worker2`;

    it("memory: a tmpfs with the fill inside the node, gone after relieve", async function () {
      await cluster.applyPressure(node, "memory");
      const mounts = await inNode(node, "grep ' /run/rekindle-pressure ' /proc/mounts");
      expect(mounts.stdout).to.match(/^rekindle-pressure \/run\/rekindle-pressure tmpfs .*size=33792k/);
      expect((await inNode(node, "stat -c %s /run/rekindle-pressure/fill")).stdout.trim()).to.equal(
        String(FILL_BYTES),
      );
      const df = await inNode(node, "df -k /run/rekindle-pressure | tail -1");
      expect(df.stdout.split(/\s+/).slice(1, 3)).to.deep.equal(["33792", "32768"]);
      await cluster.applyPressure(node, "memory"); // already applied: left as it is
      await cluster.relievePressure(node, "memory");
      expect((await inNode(node, "grep -q ' /run/rekindle-pressure ' /proc/mounts")).exitCode).to.equal(1);
      expect((await inNode(node, "test -e /run/rekindle-pressure")).exitCode).to.equal(1);
      await cluster.relievePressure(node, "memory"); // idempotent
    });

    it("disk: a file in the kubelet's root directory, gone after relieve", async function () {
      await cluster.applyPressure(node, "disk");
      expect(
        (await inNode(node, "stat -c %s /var/lib/kubelet/rekindle-pressure.fill")).stdout.trim(),
      ).to.equal(String(FILL_BYTES));
      await cluster.relievePressure(node, "disk");
      expect((await inNode(node, "test -e /var/lib/kubelet/rekindle-pressure.fill")).exitCode).to.equal(1);
      await cluster.relievePressure(node, "disk");
    });

    it("refuses a fill over the cap and writes nothing", async function () {
      const capped = standInCluster(CLUSTER, { maxFillBytes: 16 * MiB });
      const error = await rejected(capped.applyPressure(node, "memory"));
      expect(error.code).to.equal("PRECONDITION");
      expect(error.message).to.equal(
        `memory pressure on node ${node} needs a 32 MiB fill, more than the 16 MiB safety cap (maxFillBytes); nothing was written`,
      );
      expect((await inNode(node, "test -e /run/rekindle-pressure")).exitCode).to.equal(1);
    });

    it("fails with the node's output when the fill cannot be written, leaving nothing", async function () {
      const worker = `${NO_MOUNT_CLUSTER}-worker`; // no CAP_SYS_ADMIN: mount is refused
      const error = await rejected(standInCluster(NO_MOUNT_CLUSTER).applyPressure(worker, "memory"));
      expect(error.code).to.equal("COMMAND_FAILED");
      expect(error.message).to.match(
        new RegExp(`^writing the memory pressure fill on node ${worker} failed \\(exit \\d+\\): .*mount`),
      );
      expect(error.details["command"]).to.match(/^docker exec rekindle-it-standin-nomount-worker sh -c /);
      expect((await inNode(worker, "test -e /run/rekindle-pressure")).exitCode).to.equal(1);
    });
  });

  describe(`kind CLI ${PINNED_KIND_VERSION} (built from its Go module)`, function () {
    it("kind get clusters and kind get nodes see the stand-ins by their labels", async function () {
      const cli = new KindCli({ binary: kind });
      expect(await cli.clusters()).to.include(CLUSTER);
      expect((await cli.nodes(CLUSTER)).sort()).to.deep.equal([
        `${CLUSTER}-control-plane`,
        `${CLUSTER}-worker`,
        `${CLUSTER}-worker2`,
        `${CLUSTER}-worker3`,
      ]);
    });

    it("startKindCluster reuses a cluster kind lists, and never deletes it", async function () {
      const lines: string[] = [];
      const options = {
        name: CLUSTER,
        kindBinary: kind,
        profile: TIMING_PROFILES.fast,
        stateDir: join(stateDir, "reuse"),
        agentProbe: null,
        // The stand-in control plane serves a kubeconfig but no API server to install storage into,
        // nor Node objects to wait for.
        sharedStorage: false,
        waitForWorkers: false,
        progress: recordingProgress(lines),
      };
      const before = await containersOf(CLUSTER);
      const privileged = await privilegedExecWorks(`${CLUSTER}-control-plane`);
      if (privileged) {
        const reused = await startKindCluster(options);
        expect(reused.created).to.equal(false);
        expect(reused.description).to.equal(`kind cluster ${CLUSTER} (reused)`);
        expect(reused.kubeConfig().getCurrentContext()).to.equal(`kind-${CLUSTER}`);
        expect(reused.kubeConfig().getCurrentCluster()?.server).to.equal("https://127.0.0.1:6443");
        await reused.destroy();
      } else {
        // This engine cannot `docker exec --privileged`, which `kind get kubeconfig` uses: the
        // reuse decision is still made, and kind's own error comes back in a RekindleError.
        const error = await rejected(startKindCluster(options));
        expect(error.code).to.equal("COMMAND_FAILED");
        expect(error.message).to.match(
          /^kind get kubeconfig failed: failed to get cluster internal kubeconfig/,
        );
        expect(error.details["command"]).to.equal(`${kind} get kubeconfig --name ${CLUSTER}`);
        expect(error.details["outputTail"]).to.include("exec --privileged");
      }
      expect(lines.some((l) => l.startsWith(`reusing kind cluster ${CLUSTER}`))).to.equal(true);
      expect(lines.some((l) => l.startsWith("creating kind cluster"))).to.equal(false);
      expect(await containersOf(CLUSTER)).to.deep.equal(before);
      expect(readFileSync(join(stateDir, "reuse", "kind-config.fast.yaml"), "utf8")).to.include(
        "nodeLeaseDurationSeconds: 8",
      );
    });

    it("startKindCluster with reuse off refuses an existing cluster", async function () {
      const error = await rejected(
        startKindCluster({
          name: CLUSTER,
          kindBinary: kind,
          reuse: false,
          stateDir: join(stateDir, "noreuse"),
        }),
      );
      expect(error.code).to.equal("CONFLICT");
      expect(error.message).to.equal(`kind cluster ${CLUSTER} already exists and reuse is off`);
    });

    it("kind create cluster takes our rendered config and fails at the node image, leaving nothing", async function () {
      const lines: string[] = [];
      const dir = join(stateDir, "create");
      const kubeconfig = join(dir, "kubeconfig");
      const started = await startKindCluster({
        name: CREATE_CLUSTER,
        kindBinary: kind,
        // kind's own image, never rekindle's offline one: with that, "auto" would boot a whole
        // cluster here (minutes), which the kind smoke run already does.
        image: "kindest",
        profile: TIMING_PROFILES.fast,
        stateDir: dir,
        agentProbe: null,
        progress: recordingProgress(lines),
      }).then(
        (c) => c,
        (e: unknown) => e,
      );
      if (started instanceof KindCluster) {
        // A machine that can pull kindest/node really creates the cluster: then it must work and go.
        expect(started.created).to.equal(true);
        expect(await started.workerNodes()).to.have.length(3);
        await started.destroy();
      } else {
        expect(started).to.be.instanceOf(RekindleError);
        const error = started as RekindleError;
        expect(error.code).to.equal("COMMAND_FAILED");
        expect(error.message).to.match(
          /^kind create cluster failed: failed to create cluster: failed to pull image/,
        );
        expect(error.details["command"]).to.equal(
          `${kind} create cluster --name ${CREATE_CLUSTER} --config ${join(dir, "kind-config.fast.yaml")} --kubeconfig ${kubeconfig} --wait 5m`,
        );
        const output = String(error.details["outputTail"]);
        // kind read and validated the config, then tried to get the node image.
        expect(output).to.include(`Creating cluster "${CREATE_CLUSTER}"`);
        expect(output).to.include("Ensuring node image");
        expect(output).not.to.match(/invalid configuration|unknown field|error converting YAML|unmarshal/i);
        expect(lines.some((l) => l.startsWith(`creating kind cluster ${CREATE_CLUSTER}`))).to.equal(true);
      }
      expect(await containersOf(CREATE_CLUSTER)).to.deep.equal([]);
      expect(await new KindCli({ binary: kind }).clusters()).not.to.include(CREATE_CLUSTER);
      if (existsSync(kubeconfig))
        expect(readFileSync(kubeconfig, "utf8")).not.to.include(`kind-${CREATE_CLUSTER}`);
    });
  });
});
