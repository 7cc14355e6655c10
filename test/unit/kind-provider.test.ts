// The kind provider's pure parts: config rendering per profile, quantities, fill sizing and its cap,
// the exact kind command lines, node commands, stats parsing, and the e2e-kind workflow file.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import type { ContainerRuntimeClient } from "testcontainers";
import {
  defaultKindBinary,
  KindCli,
  kindArgs,
  kindErrorSummary,
  PINNED_KIND_VERSION,
} from "../../lib/cluster/kind/cli.js";
import { KIND_LATENCIES, KindCluster } from "../../lib/cluster/kind/cluster.js";
import { startKindCluster } from "../../lib/cluster/kind/start.js";
import { DEFAULT_KIND_CONFIG, profileFlags, renderKindConfig } from "../../lib/cluster/kind/config.js";
import {
  checkFillCap,
  DEFAULT_MAX_FILL_BYTES,
  defaultMaxFillBytes,
  fixedFill,
  planFill,
} from "../../lib/cluster/kind/fill.js";
import { KindNodes, sortNodeNames } from "../../lib/cluster/kind/nodes.js";
import { fillCommand, PRESSURE_PATHS, relieveCommand } from "../../lib/cluster/kind/pressure.js";
import {
  formatBytes,
  GiB,
  MiB,
  parseGoDuration,
  parseQuantity,
  parseThreshold,
  thresholdBytes,
} from "../../lib/cluster/kind/quantity.js";
import { signalStatsFromSummary } from "../../lib/cluster/kind/stats.js";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { RekindleError } from "../../lib/errors.js";
import { PROJECT_ROOT } from "../../lib/util/fixtures.js";

interface NodeConfig {
  role: string;
  labels?: Record<string, string>;
  kubeadmConfigPatches?: string[];
}
interface ClusterConfig {
  kind: string;
  apiVersion: string;
  name: string;
  nodes: NodeConfig[];
  kubeadmConfigPatches?: string[];
}

const SOURCE = readFileSync(DEFAULT_KIND_CONFIG, "utf8");

function patchesOf(config: ClusterConfig, index: number): Record<string, unknown>[] {
  return (config.nodes[index]?.kubeadmConfigPatches ?? []).map((p) => parse(p) as Record<string, unknown>);
}

function caught(fn: () => unknown): RekindleError {
  try {
    fn();
  } catch (error) {
    expect(error).to.be.instanceOf(RekindleError);
    return error as RekindleError;
  }
  throw new Error("expected a RekindleError");
}

async function rejected(promise: Promise<unknown>): Promise<RekindleError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).to.be.instanceOf(RekindleError);
  return error as RekindleError;
}

describe("kind provider", function () {
  describe("config rendering", function () {
    it("renders the default profile as kind-config.yaml says, only the name set", function () {
      const rendered = renderKindConfig(SOURCE, TIMING_PROFILES.default, {
        name: "rk",
        source: "kind-config.yaml",
      });
      const source = parse(SOURCE) as ClusterConfig;
      const out = parse(rendered.text) as ClusterConfig;
      expect(out.name).to.equal("rk");
      expect(out.nodes.map((n) => n.role)).to.deep.equal(source.nodes.map((n) => n.role));
      expect(out.nodes.map((n) => n.labels)).to.deep.equal(source.nodes.map((n) => n.labels));
      // Patch by patch, the same YAML once parsed: the default profile is what the file writes.
      const parsePatches = (c: ClusterConfig): unknown[] =>
        (c.kubeadmConfigPatches ?? []).map((t): unknown => parse(t));
      expect(parsePatches(out)).to.deep.equal(parsePatches(source));
      expect(out.nodes.map((n) => n.kubeadmConfigPatches)).to.deep.equal(
        source.nodes.map((n) => n.kubeadmConfigPatches),
      );
      expect(rendered.text).to.match(
        /^# Rendered by rekindle from kind-config\.yaml for timing profile "default"/,
      );
      expect(rendered.workers).to.equal(3);
    });

    it("substitutes the fast profile's knobs and keeps everything else", function () {
      const fast = TIMING_PROFILES.fast;
      const out = parse(renderKindConfig(SOURCE, fast, { name: "rk" }).text) as ClusterConfig;
      const source = parse(SOURCE) as ClusterConfig;
      const [cluster, kubelet] = (out.kubeadmConfigPatches ?? []).map((t): unknown => parse(t)) as [
        {
          controllerManager: { extraArgs: Record<string, string> };
          apiServer: { extraArgs: Record<string, string> };
        },
        Record<string, unknown>,
      ];
      expect(cluster.controllerManager.extraArgs).to.deep.equal({
        "node-monitor-grace-period": "10s",
        "node-monitor-period": "1s",
        "node-eviction-rate": String(fast.nodeEvictionRate),
      });
      expect(cluster.apiServer.extraArgs).to.deep.equal({
        "default-not-ready-toleration-seconds": "5",
        "default-unreachable-toleration-seconds": "5",
      });
      const originalKubelet = parse(source.kubeadmConfigPatches?.[1] ?? "") as Record<string, unknown>;
      expect(kubelet).to.deep.equal({
        ...originalKubelet,
        nodeLeaseDurationSeconds: fast.nodeLeaseDurationSeconds,
      });
      expect(out.nodes.map((n) => n.labels)).to.deep.equal(source.nodes.map((n) => n.labels));
    });

    it("updates kubeadm v1beta4 name/value extraArgs lists in place", function () {
      const source = [
        "kind: Cluster",
        "apiVersion: kind.x-k8s.io/v1alpha4",
        "nodes:",
        "  - role: control-plane",
        "    kubeadmConfigPatches:",
        "      - |",
        "        kind: ClusterConfiguration",
        "        controllerManager:",
        "          extraArgs:",
        "            - name: node-monitor-period",
        '              value: "5s"',
        "            - name: v",
        '              value: "2"',
        "",
      ].join("\n");
      const out = parse(renderKindConfig(source, TIMING_PROFILES.fast).text) as ClusterConfig;
      const [cluster] = patchesOf(out, 0) as [
        { controllerManager: { extraArgs: { name: string; value: string }[] } },
      ];
      expect(cluster.controllerManager.extraArgs).to.deep.equal([
        { name: "node-monitor-period", value: "1s" },
        { name: "v", value: "2" },
        { name: "node-monitor-grace-period", value: "10s" },
        { name: "node-eviction-rate", value: String(TIMING_PROFILES.fast.nodeEvictionRate) },
      ]);
    });

    it("adds cluster-wide patches to a config that has none", function () {
      const out = parse(
        renderKindConfig("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n", TIMING_PROFILES.fast).text,
      ) as ClusterConfig;
      const patches = (out.kubeadmConfigPatches ?? []).map((p) => parse(p) as Record<string, unknown>);
      expect(patches).to.deep.equal([
        { kind: "ClusterConfiguration", ...profileFlagsAsExtraArgs() },
        { kind: "KubeletConfiguration", nodeLeaseDurationSeconds: 8 },
      ]);
    });

    it("reads the kubelet's eviction settings from the rendered config", function () {
      const { kubelet } = renderKindConfig(SOURCE, TIMING_PROFILES.fast);
      expect(kubelet.pressureTransitionPeriodMs).to.equal(30_000);
      expect(kubelet.shutdownGracePeriodMs).to.equal(30_000);
      expect(kubelet.nodeLeaseDurationSeconds).to.equal(8);
      expect(kubelet.evictionHard["memory.available"]).to.equal("200Mi");
      expect(kubelet.evictionHard["nodefs.available"]).to.equal("10%");
    });

    it("rejects what is not a kind Cluster config, naming the file", function () {
      const error = caught(() =>
        renderKindConfig("kind: Pod\n", TIMING_PROFILES.default, { source: "x.yaml" }),
      );
      expect(error.code).to.equal("INVALID_INPUT");
      expect(error.message).to.equal('kind config x.yaml: kind must be "Cluster"');
      const version = caught(() =>
        renderKindConfig("kind: Cluster\napiVersion: v1\n", TIMING_PROFILES.default),
      );
      expect(version.message).to.include("apiVersion must be kind.x-k8s.io/v1alpha4");
    });
  });

  describe("quantities, thresholds and durations", function () {
    it("parses binary, decimal and exponent quantities", function () {
      expect(parseQuantity("200Mi")).to.equal(200 * MiB);
      expect(parseQuantity("1Gi")).to.equal(GiB);
      expect(parseQuantity("0.5Gi")).to.equal(GiB / 2);
      expect(parseQuantity("1G")).to.equal(1e9);
      expect(parseQuantity("100k")).to.equal(100_000);
      expect(parseQuantity("1e3")).to.equal(1000);
      expect(parseQuantity("1048576")).to.equal(MiB);
      expect(parseQuantity("500m")).to.equal(0.5);
    });

    it("names the input and the valid forms on a bad quantity", function () {
      const error = caught(() => parseQuantity("12 bananas"));
      expect(error.code).to.equal("INVALID_INPUT");
      expect(error.message).to.match(
        /^unknown resource quantity "12 bananas"; valid: a number with an optional suffix/,
      );
    });

    it("parses thresholds as an amount or a share of capacity", function () {
      expect(parseThreshold("200Mi")).to.deep.equal({ bytes: 200 * MiB });
      expect(parseThreshold("10%")).to.deep.equal({ percent: 10 });
      expect(thresholdBytes({ percent: 10 }, 100 * GiB)).to.equal(10 * GiB);
      expect(thresholdBytes({ bytes: 5 }, 100 * GiB)).to.equal(5);
      expect(caught(() => parseThreshold("120%")).code).to.equal("INVALID_INPUT");
    });

    it("parses Go durations", function () {
      expect(parseGoDuration("30s")).to.equal(30_000);
      expect(parseGoDuration("1m30s")).to.equal(90_000);
      expect(parseGoDuration("500ms")).to.equal(500);
      expect(parseGoDuration("5m")).to.equal(300_000);
      expect(parseGoDuration("0")).to.equal(0);
      expect(caught(() => parseGoDuration("30")).message).to.include("a Go duration");
    });

    it("formats byte counts for messages", function () {
      expect(formatBytes(8 * GiB)).to.equal("8 GiB");
      expect(formatBytes(1.5 * GiB)).to.equal("1.50 GiB");
      expect(formatBytes(256 * MiB)).to.equal("256 MiB");
      expect(formatBytes(512)).to.equal("512 B");
    });
  });

  describe("fill sizing", function () {
    it("memory: available − threshold + margin, rounded up to a MiB", function () {
      const plan = planFill(
        "memory",
        { availableBytes: 2 * GiB + 1, capacityBytes: 4 * GiB },
        { bytes: 200 * MiB },
      );
      expect(plan.signal).to.equal("memory.available");
      expect(plan.fillBytes).to.equal(2 * GiB - 200 * MiB + 64 * MiB + MiB);
      expect(plan.derivation).to.deep.equal({
        availableBytes: 2 * GiB + 1,
        thresholdBytes: 200 * MiB,
        marginBytes: 64 * MiB,
      });
    });

    it("disk: a percentage threshold is a share of the filesystem's capacity", function () {
      const plan = planFill("disk", { availableBytes: 30 * GiB, capacityBytes: 100 * GiB }, { percent: 10 });
      expect(plan.signal).to.equal("nodefs.available");
      expect(plan.fillBytes).to.equal(20 * GiB + 256 * MiB);
    });

    it("never aims below half the threshold, and writes at least the margin", function () {
      const small = planFill(
        "memory",
        { availableBytes: GiB, capacityBytes: 2 * GiB },
        { bytes: 100 * MiB },
        GiB,
      );
      expect(small.derivation?.marginBytes).to.equal(50 * MiB);
      const under = planFill("disk", { availableBytes: GiB, capacityBytes: 100 * GiB }, { percent: 10 });
      expect(under.fillBytes).to.equal(256 * MiB);
    });

    it("a fixed planner writes the given size (tests, stand-in nodes)", async function () {
      expect(await fixedFill(32 * MiB)("n", "disk")).to.deep.equal({
        kind: "disk",
        signal: "nodefs.available",
        fillBytes: 32 * MiB,
      });
    });

    it("refuses a fill over the cap, naming the size, the derivation and the option", function () {
      const plan = planFill("disk", { availableBytes: 50 * GiB, capacityBytes: 100 * GiB }, { percent: 10 });
      const error = caught(() => {
        checkFillCap("rekindle-worker2", plan, DEFAULT_MAX_FILL_BYTES);
      });
      expect(error.code).to.equal("PRECONDITION");
      expect(error.message).to.equal(
        "disk pressure on node rekindle-worker2 needs a 40.25 GiB fill " +
          "(nodefs.available 50 GiB − threshold 10 GiB + margin 256 MiB), more than the 8 GiB safety cap " +
          "(maxFillBytes); nothing was written",
      );
      expect(error.hint).to.include("maxFillBytes");
      expect(error.hint).to.include("REKINDLE_KIND_MAX_FILL");
      expect(() => {
        checkFillCap("n", { ...plan, fillBytes: DEFAULT_MAX_FILL_BYTES }, DEFAULT_MAX_FILL_BYTES);
      }).not.to.throw();
    });

    it("takes the cap from REKINDLE_KIND_MAX_FILL, else 8 GiB", function () {
      expect(defaultMaxFillBytes({})).to.equal(8 * GiB);
      expect(defaultMaxFillBytes({ REKINDLE_KIND_MAX_FILL: "16Gi" })).to.equal(16 * GiB);
    });
  });

  describe("kind command lines", function () {
    it("are exactly what the provider runs", function () {
      const cli = new KindCli({ binary: "/opt/kind" });
      expect(cli.commandLine(kindArgs.getClusters())).to.equal("/opt/kind get clusters");
      expect(cli.commandLine(kindArgs.getNodes("rekindle"))).to.equal("/opt/kind get nodes --name rekindle");
      expect(cli.commandLine(kindArgs.getKubeconfig("rekindle"))).to.equal(
        "/opt/kind get kubeconfig --name rekindle",
      );
      expect(kindArgs.createCluster("rekindle", "/s/kind-config.fast.yaml", "/s/kubeconfig")).to.deep.equal([
        "create",
        "cluster",
        "--name",
        "rekindle",
        "--config",
        "/s/kind-config.fast.yaml",
        "--kubeconfig",
        "/s/kubeconfig",
        "--wait",
        "5m",
      ]);
      expect(cli.commandLine(kindArgs.deleteCluster("rekindle", "/s/kubeconfig"))).to.equal(
        "/opt/kind delete cluster --name rekindle --kubeconfig /s/kubeconfig",
      );
    });

    it("finds kind in REKINDLE_KIND, else on PATH", function () {
      expect(defaultKindBinary({ REKINDLE_KIND: "/x/kind" })).to.equal("/x/kind");
      expect(defaultKindBinary({})).to.equal("kind");
    });

    it("picks kind's ERROR line out of its output", function () {
      const output = [
        'Creating cluster "x" ...',
        " ✗ Ensuring node image (kindest/node:v1.37.0)",
        'ERROR: failed to create cluster: failed to pull image "kindest/node:v1.37.0"',
        "Command Output: Error response from daemon: no such host",
      ].join("\n");
      expect(kindErrorSummary(output)).to.equal(
        'failed to create cluster: failed to pull image "kindest/node:v1.37.0"',
      );
    });

    it("says how to get kind when the binary is missing", async function () {
      const error = await rejected(new KindCli({ binary: "/nonexistent/kind" }).clusters());
      expect(error.code).to.equal("TOOLCHAIN");
      expect(error.message).to.equal('the kind binary "/nonexistent/kind" cannot be run');
      expect(error.hint).to.equal(
        `install kind (go install sigs.k8s.io/kind@${PINNED_KIND_VERSION}) or set REKINDLE_KIND=/path/to/kind`,
      );
    });
  });

  describe("startKindCluster preflight", function () {
    const noEngine = (): Promise<ContainerRuntimeClient> => Promise.reject(new Error("no socket"));
    const fakeEngine = (): Promise<ContainerRuntimeClient> => Promise.resolve({} as ContainerRuntimeClient);

    it("says so when no container engine answers", async function () {
      const error = await rejected(
        startKindCluster({ containerEngine: noEngine, kindBinary: "/nonexistent/kind" }),
      );
      expect(error.code).to.equal("NOT_FOUND");
      expect(error.message).to.equal("no container engine answers (kind nodes are containers)");
      expect(error.hint).to.include("start Docker");
    });

    it("says so when the kind binary is missing", async function () {
      const error = await rejected(
        startKindCluster({ containerEngine: fakeEngine, kindBinary: "/nonexistent/kind" }),
      );
      expect(error.code).to.equal("TOOLCHAIN");
      expect(error.hint).to.include("REKINDLE_KIND");
    });

    // The profile is parsed at the edge (timingProfile, see profiles.test.ts) and arrives as an object.
    it("validates the name before touching anything", async function () {
      expect((await rejected(startKindCluster({ name: "Bad_Name" }))).code).to.equal("INVALID_INPUT");
    });
  });

  describe("KindCluster", function () {
    const cluster = new KindCluster({
      name: "rk",
      runId: "kind-abc123",
      profile: TIMING_PROFILES.fast,
      config: renderKindConfig(SOURCE, TIMING_PROFILES.fast, { name: "rk" }),
      kubeconfigPath: "/state/kubeconfig",
      created: false,
      cli: new KindCli({ binary: "kind" }),
      nodes: new KindNodes("rk", () => Promise.reject(new Error("unused"))),
    });

    it("states its latencies, eviction settings and capabilities", function () {
      expect(cluster.provider).to.equal("kind");
      expect(cluster.description).to.equal("kind cluster rk (reused)");
      expect(cluster.latencies).to.deep.equal(KIND_LATENCIES);
      expect(cluster.latencies).to.deep.equal({ podStartMs: 3000, attachMs: 0, frozenPowerOffMs: 6000 });
      expect(cluster.eviction).to.deep.equal({
        pressureTransitionPeriodMs: 30_000,
        monitoringIntervalMs: 10_000,
        statusUpdateIntervalMs: 10_000,
        shutdownGracePeriodMs: 30_000,
      });
      // Every node fault is supported; restarting kube-controller-manager with other flags and the
      // sim's hostile-condition knobs are not, each with its reason.
      expect(Object.keys(cluster.unsupported)).to.deep.equal([
        "controller-manager-flags",
        "clock-skew",
        "apiserver-pause",
        "node-reregistration",
      ]);
      for (const [capability, reason] of Object.entries(cluster.unsupported)) {
        expect(reason, capability).to.match(/not implemented for kind|not implemented yet/);
        expect(cluster.capabilities[capability as keyof typeof cluster.capabilities], capability).to.equal(
          undefined,
        );
      }
      expect(cluster.fenceDriver().name).to.equal("docker");
      expect(cluster.maxFillBytes).to.equal(defaultMaxFillBytes());
    });

    it("tells how to reach and remove a reused cluster", function () {
      expect(cluster.keepHint()).to.equal(
        "kind cluster rk was reused and stays running: export KUBECONFIG=/state/kubeconfig; delete it with: kind delete cluster --name rk",
      );
    });

    it("reports a missing container engine from node operations", async function () {
      const error = await rejected(cluster.workerNodes());
      expect(error.message).to.equal("no container engine answers (kind nodes are containers)");
    });
  });

  describe("node commands", function () {
    it("memory: a tmpfs 1 MiB larger than the fill, then the file", function () {
      const [shell, flag, script] = fillCommand("memory", 32 * MiB);
      expect([shell, flag]).to.deep.equal(["sh", "-c"]);
      expect(script).to.include(
        `mount -t tmpfs -o size=${33 * MiB} rekindle-pressure ${PRESSURE_PATHS.memoryMount}`,
      );
      expect(script).to.include(`fallocate -l ${32 * MiB} ${PRESSURE_PATHS.memoryFile}`);
      expect(script).to.include("dd if=/dev/zero");
    });

    it("disk: a file in the kubelet's root directory (nodefs is the filesystem holding it)", function () {
      expect(fillCommand("disk", 10 * MiB + 1)[2]).to.equal(
        `set -e; mkdir -p /var/lib/kubelet; fallocate -l ${11 * MiB} /var/lib/kubelet/rekindle-pressure.fill 2>/dev/null || ` +
          `dd if=/dev/zero of=/var/lib/kubelet/rekindle-pressure.fill bs=1048576 count=11 2>&1`,
      );
    });

    it("relieving removes the file and unmounts only what is mounted", function () {
      expect(relieveCommand("disk")).to.deep.equal([
        "sh",
        "-c",
        "rm -f /var/lib/kubelet/rekindle-pressure.fill",
      ]);
      expect(relieveCommand("memory")[2]).to.equal(
        "rm -f /run/rekindle-pressure/fill; if grep -q ' /run/rekindle-pressure ' /proc/mounts; then umount /run/rekindle-pressure; fi; rmdir /run/rekindle-pressure 2>/dev/null || true",
      );
    });

    it("sorts node names as people count", function () {
      expect(sortNodeNames(["k-worker10", "k-worker2", "k-worker"])).to.deep.equal([
        "k-worker",
        "k-worker2",
        "k-worker10",
      ]);
    });
  });

  describe("kubelet stats", function () {
    it("reads memory and nodefs from a stats summary (object or JSON text)", function () {
      const summary = {
        node: {
          nodeName: "n",
          memory: { availableBytes: 3 * GiB, workingSetBytes: GiB },
          fs: { availableBytes: 40 * GiB, capacityBytes: 100 * GiB },
        },
      };
      const expected = {
        memory: { availableBytes: 3 * GiB, capacityBytes: 4 * GiB },
        disk: { availableBytes: 40 * GiB, capacityBytes: 100 * GiB },
      };
      expect(signalStatsFromSummary("n", summary)).to.deep.equal(expected);
      expect(signalStatsFromSummary("n", JSON.stringify(summary))).to.deep.equal(expected);
      expect(caught(() => signalStatsFromSummary("n", { node: {} })).code).to.equal("PRECONDITION");
    });
  });

  describe("e2e-kind workflow", function () {
    interface Step {
      name?: string;
      run?: string;
      uses?: string;
      if?: string;
      with?: Record<string, unknown>;
    }
    const workflow = parse(
      readFileSync(join(PROJECT_ROOT, ".github", "workflows", "e2e-kind.yml"), "utf8"),
    ) as {
      on: Record<string, unknown>;
      env: Record<string, string>;
      jobs: Record<string, { "runs-on": string; steps: Step[] }>;
    };
    const job = Object.values(workflow.jobs)[0];
    const steps = job?.steps ?? [];
    const runs = steps.map((s) => s.run ?? "").join("\n");

    it("runs nightly, by hand, and on changes to lib, suites and kind-config.yaml", function () {
      expect(workflow.on).to.have.keys("workflow_dispatch", "schedule", "pull_request");
      expect((workflow.on["pull_request"] as { paths: string[] }).paths).to.have.members([
        "lib/**",
        "suites/**",
        "kind-config.yaml",
      ]);
      expect(job?.["runs-on"]).to.equal("ubuntu-latest");
    });

    it("builds the pinned kind from its module and runs rekindle on it", function () {
      expect(workflow.env["KIND_VERSION"]).to.equal(PINNED_KIND_VERSION);
      expect(runs).to.include('go install "sigs.k8s.io/kind@${KIND_VERSION}"');
      expect(runs).not.to.match(/curl|wget|releases\/download/);
      expect(runs).to.include("npm ci");
      expect(runs).to.include("npx rekindle run --provider kind --profile fast --report-dir reports/e2e");
      expect(steps.find((s) => s.uses?.startsWith("actions/setup-go"))?.with?.["go-version"]).to.equal(
        "1.26.x",
      );
      expect(steps.find((s) => s.uses?.startsWith("actions/setup-node"))?.with?.["node-version"]).to.equal(
        22,
      );
    });

    it("always uploads the reports and deletes the cluster", function () {
      const upload = steps.find((s) => s.uses?.startsWith("actions/upload-artifact"));
      expect(upload?.if).to.equal("always()");
      expect(upload?.with?.["path"]).to.equal("reports/e2e");
      const last = steps.at(-1);
      expect(last?.if).to.equal("always()");
      expect(last?.run).to.include("kind delete cluster --name");
      expect(workflow.env["KIND_CLUSTER"]).to.equal("rekindle");
    });
  });
});

function profileFlagsAsExtraArgs(): Record<string, { extraArgs: Record<string, string> }> {
  const flags = profileFlags(TIMING_PROFILES.fast);
  return {
    controllerManager: { extraArgs: flags.controllerManager },
    apiServer: { extraArgs: flags.apiServer },
  };
}
