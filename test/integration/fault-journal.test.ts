// Fault handles and the journal on a real sim cluster (fast profile, 3 workers): a 3-node partition
// that fails on its 2nd node leaves every node healed and the journal empty; a fault left by a run
// SIGKILLed mid-fault is found and reverted by `rekindle reap`.
import { expect } from "chai";
import { execa } from "execa";
import { join } from "node:path";
import type { NodePartition } from "../../lib/cluster/provider.js";
import { TIMING_PROFILES, leaseRenewIntervalMs } from "../../lib/cluster/profiles.js";
import { SimCluster } from "../../lib/cluster/sim/cluster.js";
import { SimClusterUnderTest } from "../../lib/cluster/sim/under-test.js";
import { RekindleError } from "../../lib/errors.js";
import { FaultInjector } from "../../lib/fault/injector.js";
import { ConfigMapJournal } from "../../lib/fault/journal.js";
import { waitForNodeBack } from "../../lib/kube/queries.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { ScenarioSteps } from "../../lib/scenario/steps.js";
import { rekindleRejection } from "../support/assertions.js";
import { REKINDLE_BIN } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";
import { destroyLeavingNothing } from "../support/sim-leftovers.js";

const profile = TIMING_PROFILES.fast;

describe("fault handles and the fault journal on the sim (fast profile)", function () {
  let cluster: SimCluster | undefined;
  let underTest: SimClusterUnderTest;

  before(async function () {
    cluster = await SimCluster.start({
      name: "it-fault-journal",
      root: join(testRunDir("fault-journal"), "cluster"),
      workers: 3,
      zones: 1,
      profile,
      progress: consoleProgress(),
    });
    underTest = new SimClusterUnderTest(cluster);
  });

  after(async function () {
    if (cluster) await destroyLeavingNothing(cluster, () => underTest.destroy());
  });

  const nodeBack = (node: string) =>
    waitForNodeBack(underTest.kubeConfig(), node, {
      freshWithinMs: leaseRenewIntervalMs(profile) + 1_000,
      timeoutMs: 60_000,
    });

  it("a 3-node partition whose 2nd node fails half-way is reverted on every node, and its record removed", async function () {
    const nodes = cluster!.nodeNames();
    expect(nodes).to.have.length(3);
    // The 2nd node is partitioned, then its call fails: partly applied, so it must be healed too.
    const failing: NodePartition = {
      async partitionNode(name) {
        await underTest.partitionNode(name);
        if (name === nodes[1]) throw new RekindleError("COMMAND_FAILED", `injected failure on ${name}`);
      },
      healNode: (name) => underTest.healNode(name),
    };
    const journal = ConfigMapJournal.forCluster(underTest.kubeConfig());
    const steps = new ScenarioSteps("it");
    const injector = new FaultInjector({
      capabilities: { partition: failing },
      runId: cluster!.runId,
      undo: steps,
      journal,
      locator: underTest.faultLocator(),
    });
    const error = await rekindleRejection(injector.inject({ action: { kind: "partition" }, nodes }));
    expect(error.message).to.contain(`injected failure on ${nodes[1]}`);
    expect(error.message).to.contain(`reverted ${nodes[0]}, ${nodes[1]}`);
    expect(cluster!.status().nodes.map((n) => n.power)).to.deep.equal(["running", "running", "running"]);
    for (const node of nodes) await nodeBack(node);
    expect((await journal.list()).records).to.deep.equal([]);
    await steps.undoAll(); // the registered undo finds nothing left to do
  });

  it("a fault left by a run SIGKILLed mid-fault is reverted by `rekindle reap`, which leaves the journal empty", async function () {
    const [node = ""] = cluster!.nodeNames();
    const journal = ConfigMapJournal.forCluster(underTest.kubeConfig());
    const child = execa(
      process.execPath,
      ["--import", "tsx", join(PROJECT_ROOT, "test", "support", "hold-fault.ts"), cluster!.layout.root, node],
      { reject: false, buffer: false, timeout: 120_000 },
    );
    const faulted = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const match = /FAULTED (\S+)/.exec(out);
        if (match?.[1]) resolve(match[1]);
      });
      void child.then((r) => {
        reject(new Error(`hold-fault exited early with ${String(r.exitCode)}: ${String(r.stderr)}`));
      });
    });
    child.kill("SIGKILL");
    await child;
    expect(cluster!.status().nodes.find((n) => n.name === node)?.power).to.equal("partitioned");
    const left = (await journal.list()).records;
    expect(left.map((r) => `${r.id} ${r.holder.pid}`)).to.deep.equal([`${faulted} ${String(child.pid)}`]);
    expect(left[0]?.nodes.map((n) => `${n.name}:${n.state}`)).to.deep.equal([`${node}:applied`]);

    const runReap = () =>
      execa(process.execPath, [REKINDLE_BIN, "reap", "--kubeconfig", cluster!.kubeconfigPath], {
        reject: false,
        timeout: 120_000,
      });
    const reap = await runReap();
    expect(reap.exitCode, reap.stderr).to.equal(0);
    expect(reap.stdout).to.contain("fault journal: 1 record(s) found");
    expect(reap.stdout).to.contain(`reverted partition of ${node} (run killed-run`);
    expect(cluster!.status().nodes.find((n) => n.name === node)?.power).to.equal("running");
    await nodeBack(node);
    expect((await journal.list()).records).to.deep.equal([]);

    const again = await runReap();
    expect(again.exitCode, again.stderr).to.equal(0);
    expect(again.stdout.trim()).to.equal("fault journal: nothing left by an earlier run");
  });
});
