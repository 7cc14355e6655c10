// The kind provider's configuration: the kind config rendered per profile, quantities, thresholds
// and durations, fill sizing and its cap.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { DEFAULT_KIND_CONFIG, profileFlags, renderKindConfig } from "../../lib/cluster/kind/config.js";
import {
  checkFillCap,
  DEFAULT_MAX_FILL_BYTES,
  defaultMaxFillBytes,
  fixedFill,
  planFill,
} from "../../lib/cluster/kind/fill.js";
import {
  formatBytes,
  GiB,
  MiB,
  parseGoDuration,
  parseQuantity,
  parseThreshold,
  thresholdBytes,
} from "../../lib/cluster/kind/quantity.js";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { rekindleThrow } from "../support/assertions.js";

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
        "secondary-node-eviction-rate": "0.2",
        "unhealthy-zone-threshold": "0.55",
        "large-cluster-size-threshold": "10",
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
        { name: "secondary-node-eviction-rate", value: "0.2" },
        { name: "unhealthy-zone-threshold", value: "0.55" },
        { name: "large-cluster-size-threshold", value: "10" },
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
      const error = rekindleThrow(() =>
        renderKindConfig("kind: Pod\n", TIMING_PROFILES.default, { source: "x.yaml" }),
      );
      expect(error.code).to.equal("INVALID_INPUT");
      expect(error.message).to.equal('kind config x.yaml: kind must be "Cluster"');
      const version = rekindleThrow(() =>
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
      const error = rekindleThrow(() => parseQuantity("12 bananas"));
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
      expect(rekindleThrow(() => parseThreshold("120%")).code).to.equal("INVALID_INPUT");
    });

    it("parses Go durations", function () {
      expect(parseGoDuration("30s")).to.equal(30_000);
      expect(parseGoDuration("1m30s")).to.equal(90_000);
      expect(parseGoDuration("500ms")).to.equal(500);
      expect(parseGoDuration("5m")).to.equal(300_000);
      expect(parseGoDuration("0")).to.equal(0);
      expect(rekindleThrow(() => parseGoDuration("30")).message).to.include("a Go duration");
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
      const error = rekindleThrow(() => {
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
});

function profileFlagsAsExtraArgs(): Record<string, { extraArgs: Record<string, string> }> {
  const flags = profileFlags(TIMING_PROFILES.fast);
  return {
    controllerManager: { extraArgs: flags.controllerManager },
    apiServer: { extraArgs: flags.apiServer },
  };
}
