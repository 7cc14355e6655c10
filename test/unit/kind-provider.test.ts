// The kind provider's pure parts: the exact kind command lines, node commands, stats parsing, and
// the e2e-kind workflow file (its config, quantities and fill sizing: kind-provider-config.test.ts).
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
import { DEFAULT_KIND_CONFIG, renderKindConfig } from "../../lib/cluster/kind/config.js";
import { defaultMaxFillBytes } from "../../lib/cluster/kind/fill.js";
import { KindNodes, sortNodeNames } from "../../lib/cluster/kind/nodes.js";
import { fillCommand, PRESSURE_PATHS, relieveCommand } from "../../lib/cluster/kind/pressure.js";
import { GiB, MiB } from "../../lib/cluster/kind/quantity.js";
import { signalStatsFromSummary } from "../../lib/cluster/kind/stats.js";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { rekindleThrow, rekindleRejection } from "../support/assertions.js";

const SOURCE = readFileSync(DEFAULT_KIND_CONFIG, "utf8");

describe("kind provider", function () {
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
      const error = await rekindleRejection(new KindCli({ binary: "/nonexistent/kind" }).clusters());
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
      const error = await rekindleRejection(
        startKindCluster({ containerEngine: noEngine, kindBinary: "/nonexistent/kind" }),
      );
      expect(error.code).to.equal("UNREACHABLE");
      expect(error.message).to.equal("no container engine answers (kind nodes are containers)");
      expect(error.hint).to.include("start Docker");
    });

    it("says so when the kind binary is missing", async function () {
      const error = await rekindleRejection(
        startKindCluster({ containerEngine: fakeEngine, kindBinary: "/nonexistent/kind" }),
      );
      expect(error.code).to.equal("TOOLCHAIN");
      expect(error.hint).to.include("REKINDLE_KIND");
    });

    // The profile is parsed at the edge (timingProfile, see profiles.test.ts) and arrives as an object.
    it("validates the name before touching anything", async function () {
      expect((await rekindleRejection(startKindCluster({ name: "Bad_Name" }))).code).to.equal(
        "INVALID_INPUT",
      );
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
      expect(cluster.latencies).to.deep.equal({
        podStartMs: 3000,
        attachMs: 0,
        frozenPowerOffMs: 6000,
        powerOnMs: 6000,
      });
      expect(cluster.eviction).to.deep.equal({
        pressureTransitionPeriodMs: 30_000,
        monitoringIntervalMs: 10_000,
        statusUpdateIntervalMs: 10_000,
        shutdownGracePeriodMs: 30_000,
      });
      // Every node fault and kube-controller-manager's flags (its static pod) are supported; the
      // sim's hostile-condition knobs are not, each with its reason.
      expect(cluster.capabilities["controller-manager-flags"]).to.be.an("object");
      expect(Object.keys(cluster.unsupported)).to.deep.equal([
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
      const error = await rekindleRejection(cluster.workerNodes());
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
      expect(rekindleThrow(() => signalStatsFromSummary("n", { node: {} })).code).to.equal("PRECONDITION");
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
