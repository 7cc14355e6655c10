import { expect } from "chai";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { RunFlags, RunSettings } from "../../lib/run/run-flags.js";
import { planRun } from "../../lib/run/run-plan.js";
import { silentProgress } from "../../lib/util/progress.js";
import { rekindleRejection } from "../support/assertions.js";

const plan = (flags: RunFlags, settings: RunSettings = {}) =>
  planRun(flags, { progress: silentProgress, ...settings });

/** The INVALID_INPUT message a bad set of flags is refused with. */
async function refusal(flags: RunFlags): Promise<string> {
  const error = await rekindleRejection(plan(flags));
  expect(error.code).to.equal("INVALID_INPUT");
  return error.message;
}

describe("run plan: the cluster spec, one variant per provider", function () {
  let dir: string;
  before(function () {
    dir = mkdtempSync(join(tmpdir(), "rekindle-run-plan-"));
  });
  after(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  it("sim: its size from the flags, zones at most 2 and at most the workers", async function () {
    expect((await plan({ provider: "sim", workers: "5" })).cluster).to.deep.equal({
      provider: "sim",
      workers: 5,
      zones: 2,
    });
    expect((await plan({ provider: "sim", workers: "1" })).cluster).to.deep.equal({
      provider: "sim",
      workers: 1,
      zones: 1,
    });
    expect(
      (await plan({ provider: "sim", workers: "4", zones: "3", "pods-per-node": "7" })).cluster,
    ).to.deep.equal({
      provider: "sim",
      workers: 4,
      zones: 3,
      podsPerNode: 7,
    });
  });

  it("sim: 3 workers in 2 zones when the selection names no larger size", async function () {
    const { cluster } = await plan({ provider: "sim", suite: ["node-loss"] });
    expect(cluster).to.deep.equal({ provider: "sim", workers: 3, zones: 2 });
  });

  it("kind: its name, image and storage, nothing of the other providers'", async function () {
    expect((await plan({ provider: "kind" })).cluster).to.deep.equal({
      provider: "kind",
      name: "rekindle",
      csiStorage: true,
    });
    const { cluster } = await plan({
      provider: "kind",
      "cluster-name": "mine",
      image: "auto",
      "storage-class": "rekindle-shared",
      kubeconfig: "ignored-for-kind",
    });
    expect(cluster).to.deep.equal({ provider: "kind", name: "mine", image: "auto", csiStorage: false });
  });

  it("existing: the kubeconfig, context and storage class as given", async function () {
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        'clusters: [{ name: c, cluster: { server: "http://127.0.0.1:1" } }]',
        "users: [{ name: u, user: { token: t } }]",
        "contexts: [{ name: ctx, context: { cluster: c, user: u } }]",
        "current-context: ctx",
        "",
      ].join("\n"),
    );
    const { cluster } = await plan({
      provider: "existing",
      kubeconfig,
      context: "ctx",
      "storage-class": "fast",
      "cluster-name": "ignored-for-existing",
    });
    expect(cluster).to.deep.equal({ provider: "existing", kubeconfig, context: "ctx", storageClass: "fast" });
  });

  it("survives JSON (the --parallel slots take their options across processes)", async function () {
    for (const flags of [{ provider: "sim", workers: "6" }, { provider: "kind" }]) {
      const planned = await plan(flags);
      expect(JSON.parse(JSON.stringify(planned.cluster))).to.deep.equal(planned.cluster);
    }
  });

  it("carries the checked inputs: suites, repeat, profile", async function () {
    const planned = await plan({ provider: "sim", suite: ["node-loss"], repeat: "2", profile: "fast" });
    expect(planned.suites).to.deep.equal(["node-loss"]);
    expect(planned.repeat).to.equal(2);
    expect(planned.profile.name).to.equal("fast");
    expect(planned.filePlan).to.equal(undefined);
  });
});

describe("run plan: bad input names the flag and the valid forms", function () {
  it("an unknown provider, with the providers and a did-you-mean", async function () {
    const message = await refusal({ provider: "simm" });
    expect(message).to.include('provider "simm"');
    expect(message).to.include("valid: kind, sim, existing");
    expect(message).to.include("did you mean sim?");
  });

  it("sim size flags on another provider", async function () {
    const message = await refusal({ provider: "kind", workers: "4", zones: "2" });
    expect(message).to.include("--workers, --zones");
    expect(message).to.include("--provider kind does not take them");
  });

  it("more zones than workers, with the valid range", async function () {
    expect(await refusal({ provider: "sim", workers: "2", zones: "3" })).to.include(
      "--zones takes a whole number from 1 to 2 (the worker count), not 3",
    );
  });

  it("a storage class kind does not have, with its two", async function () {
    const message = await refusal({ provider: "kind", "storage-class": "gold" });
    expect(message).to.include("--storage-class");
    expect(message).to.include("rekindle-csi, rekindle-shared");
  });

  it("existing-only flags on rekindle's own clusters", async function () {
    expect(await refusal({ provider: "sim", "fence-config": "f.yaml" })).to.include(
      "--fence-config is for --provider existing",
    );
  });

  it("a repeat count out of range, a pattern that is no regular expression, -f with --suite", async function () {
    expect(await refusal({ provider: "sim", repeat: "0" })).to.include("a whole number from 1 to 100");
    expect(await refusal({ provider: "sim", scenario: "(" })).to.include("--scenario pattern");
    expect(await refusal({ provider: "sim", file: ["x.yaml"], suite: ["node-loss"] })).to.include(
      "-f and --suite do not go together",
    );
  });

  it("an unknown suite family or profile", async function () {
    expect(await refusal({ provider: "sim", suite: ["node-los"] })).to.include("node-loss");
    expect(await refusal({ provider: "sim", profile: "fastest" })).to.include("fast");
  });
});

describe("run plan: the flags the CLI used to check itself, refused here", function () {
  it("a --repeat, --workers or --max-faulted-nodes that is no whole number or out of range", async function () {
    expect(await refusal({ provider: "sim", repeat: "two" })).to.equal(
      '--repeat takes a whole number, not "two"',
    );
    expect(await refusal({ provider: "sim", workers: "0" })).to.include(
      "--workers takes a whole number from 1",
    );
    expect(
      await refusal({ provider: "existing", "allow-faults": true, "max-faulted-nodes": "x" }),
    ).to.include("--max-faulted-nodes takes a whole number");
  });

  it("--parallel: a bad count, another provider, or with --keep-cluster", async function () {
    expect(await refusal({ provider: "sim", parallel: "0" })).to.include(
      '--parallel "0" is not a cluster count',
    );
    expect(await refusal({ provider: "kind", parallel: "2" })).to.include(
      "--parallel 2 needs --provider sim, got --provider kind",
    );
    expect(await refusal({ parallel: "auto" })).to.include(
      "got no --provider (kind is chosen when it answers)",
    );
    expect(await refusal({ provider: "sim", parallel: "2", "keep-cluster": true })).to.include(
      "--keep-cluster does not go with --parallel 2",
    );
  });

  it("an --image kind does not know, a --shard that is no shard", async function () {
    expect(await refusal({ provider: "kind", image: "latest" })).to.include('unknown --image "latest"');
    expect(await refusal({ provider: "sim", shard: "3/2" })).to.include('--shard "3/2" is not a shard');
  });

  it("--node-selector and its old spelling disagreeing, --allow-faults on rekindle's own cluster", async function () {
    expect(await refusal({ provider: "existing", "node-selector": "a=b", "nodes-selector": "c=d" })).to.equal(
      "--node-selector a=b and --nodes-selector c=d differ",
    );
    expect(await refusal({ provider: "sim", "allow-faults": true, nodes: "w1" })).to.include(
      "--allow-faults is for --provider existing",
    );
  });

  it("an existing cluster's kubeconfig that is not there", async function () {
    expect(await refusal({ provider: "existing", kubeconfig: "/nonexistent/kubeconfig" })).to.include(
      "/nonexistent/kubeconfig",
    );
  });
});

describe("run plan: the layout, the reports and the node agent", function () {
  it("by default side by side (auto) on the sim, serial elsewhere or when the cluster is kept", async function () {
    expect((await plan({ provider: "sim" })).layout).to.deep.equal({
      parallel: "auto",
      byDefault: true,
      workersGiven: false,
    });
    expect((await plan({ provider: "sim", "keep-cluster": true })).layout.parallel).to.equal(1);
    expect((await plan({ provider: "kind" })).layout.parallel).to.equal(1);
  });

  it("--parallel as given; --workers fixes every cluster's size", async function () {
    expect((await plan({ provider: "sim", parallel: "3", workers: "4" })).layout).to.deep.equal({
      parallel: 3,
      byDefault: false,
      workersGiven: true,
    });
    expect((await plan({ provider: "kind", parallel: "1" })).layout.parallel).to.equal(1);
  });

  it("the report directory absolute, --no-html, --allure-history unset, the test log", async function () {
    const planned = await plan(
      { provider: "sim", "report-dir": "out/r", "no-html": true },
      { testLog: "stderr" },
    );
    expect(planned.reportDir).to.equal(resolve("out/r"));
    expect(planned.allureHtml).to.equal(false);
    expect(planned.allureHistory).to.equal(undefined);
    expect(planned.testLog).to.equal("stderr");
    const defaults = await plan({ provider: "sim" });
    expect([defaults.reportDir, defaults.allureHtml, defaults.keepCluster, defaults.testLog]).to.deep.equal([
      undefined,
      true,
      false,
      "stdout",
    ]);
  });

  it("existing: the node agent only with the rails flags", async function () {
    const kubeconfig = join(mkdtempSync(join(tmpdir(), "rekindle-run-plan-")), "kubeconfig");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        'clusters: [{ name: c, cluster: { server: "http://127.0.0.1:1" } }]',
        "users: [{ name: u, user: { token: t } }]",
        "contexts: [{ name: ctx, context: { cluster: c, user: u } }]",
        "current-context: ctx",
        "",
      ].join("\n"),
    );
    const agent = () => Promise.resolve(undefined);
    const without = await plan({ provider: "existing", kubeconfig }, { agent });
    expect(without.cluster).to.deep.equal({ provider: "existing", kubeconfig });
    const railed = await plan(
      { provider: "existing", kubeconfig, "allow-faults": true, nodes: "w1,w2", "fault-deadline": "30m" },
      { agent },
    );
    expect(railed.cluster).to.deep.include({
      rails: { allowFaults: true, nodes: ["w1", "w2"], deadlineMs: 1_800_000 },
      agent,
    });
  });
});
