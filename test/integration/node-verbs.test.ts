// The verbs through the real CLI on a sim cluster: `rekindle up` leaves it running, `rekindle node
// partition|stop` leave a fault journalled in the cluster with its deadline (the command is gone),
// `rekindle reap` leaves it until then and reverts it after, `rekindle node heal` ends it sooner,
// `rekindle down` leaves nothing. Short: the fast profile, 2 workers, one 30 s deadline.
import { expect } from "chai";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSimState } from "../../lib/cluster/sim/boot/state.js";
import { findProcessesByRunTag } from "../../lib/util/daemon.js";
import { pollUntil } from "../../lib/util/time.js";
import { simCli } from "../support/sim-cli.js";

const stateDir = mkdtempSync(join(tmpdir(), "rekindle-verbs-"));
const env = { ...process.env, REKINDLE_STATE_DIR: stateDir };
const NAME = "it-verbs";
const SIM = ["--provider", "sim", "--name", NAME];

const { rekindle, kubectl } = simCli(env);

describe("rekindle up / node / down on the sim (verbs through the fault layer)", function () {
  let kubeconfig = "";
  let runId = "";

  after(async function () {
    await rekindle("down", ...SIM);
    if (runId !== "") expect(findProcessesByRunTag(runId), runId).to.deep.equal([]);
  });

  const journal = async () =>
    (
      await kubectl(
        kubeconfig,
        "get",
        "configmaps",
        "-n",
        "rekindle-journal",
        "-l",
        "rekindle.dev/journal=fault",
        "-o",
        "name",
      )
    ).stdout
      .split("\n")
      .filter((l) => l !== "");

  it("up --provider sim starts the cluster in the background and prints its kubeconfig", async function () {
    const up = await rekindle("up", ...SIM, "--workers", "2", "--profile", "fast");
    expect(up.exitCode, up.stderr).to.equal(0);
    kubeconfig = up.stdout.trim();
    expect(kubeconfig).to.match(/kubeconfig$/);
    runId = readSimState(join(stateDir, "sim", NAME, "state.json")).runId;
  });

  it("refuses bad input before touching the cluster: --for out of range, --allow-faults off existing, a node it lacks", async function () {
    const short = await rekindle("node", "stop", "worker-1", ...SIM, "--for", "5s");
    expect(short.exitCode).to.equal(2);
    expect(short.stderr).to.include("--for 5s is out of range; valid: from 30s to 1h");
    const long = await rekindle("node", "stop", "worker-1", ...SIM, "--for", "2h");
    expect(long.exitCode).to.equal(2);
    const rails = await rekindle("node", "stop", "worker-1", ...SIM, "--allow-faults");
    expect(rails.exitCode).to.equal(2);
    expect(rails.stderr).to.include("--allow-faults is for --provider existing");
    const missing = await rekindle("node", "partition", "worker-9", ...SIM);
    expect(missing.exitCode).to.equal(2);
    expect(missing.stderr).to.include('unknown node "worker-9"; valid: worker-1, worker-2');
    expect(await journal()).to.deep.equal([]);
  });

  // The sim as an existing cluster: KWOK runs no containers, so no node agent can run on it; what
  // the gate can show is the refusal without one (the agent itself is proven on kind, test:full).
  it("--provider existing --allow-faults without rekindle's node agent: exit 2 saying to install it, nothing left", async function () {
    const namespaces = async () => (await kubectl(kubeconfig, "get", "namespaces", "-o", "name")).stdout;
    const before = await namespaces();
    const reportDir = mkdtempSync(join(tmpdir(), "rekindle-verbs-run-"));
    const existing = ["--provider", "existing", "--kubeconfig", kubeconfig, "--allow-faults"];
    const refusal =
      "--allow-faults needs rekindle's node agent: rekindle's node agent is not installed (no DaemonSet rekindle-agent/rekindle-agent)";
    const run = await rekindle(
      "run",
      ...existing,
      "--nodes",
      "worker-1",
      "--profile",
      "fast",
      "--suite",
      "node-loss",
      "--no-html",
      "--report-dir",
      reportDir,
    );
    expect(run.exitCode, run.stderr).to.equal(2);
    expect(run.stderr).to.include(refusal);
    expect(run.stderr).to.include("install it with: rekindle agent install");
    const verb = await rekindle("node", "stop", "worker-1", ...existing);
    expect(verb.exitCode, verb.stderr).to.equal(2);
    expect(verb.stderr).to.include(refusal);
    expect(await namespaces()).to.equal(before);
    expect(await journal()).to.deep.equal([]);
  });

  it("node partition leaves the partition journalled after it exits; reap leaves it; node heal ends it", async function () {
    const partition = await rekindle("node", "partition", "worker-2", ...SIM, "--for", "5m");
    expect(partition.exitCode, partition.stderr).to.equal(0);
    const id = partition.stdout.trim();
    expect(partition.stderr).to.include("preflight: partition of worker-2 (and no other node)");
    expect(partition.stderr).to.include(
      `end it with: rekindle node heal worker-2 --provider sim --name ${NAME}`,
    );
    expect(await journal()).to.deep.equal([`configmap/${id}`]);
    const status = await rekindle("sim", "status", "--name", NAME, "-o", "json");
    const nodes = (JSON.parse(status.stdout) as { nodes: { name: string; power: string }[] }).nodes;
    expect(nodes.find((n) => n.name === "worker-2")?.power).to.equal("partitioned");

    const reap = await rekindle("reap", "--kubeconfig", kubeconfig);
    expect(reap.exitCode).to.equal(1);
    expect(reap.stdout).to.include("left by `rekindle node partition` until its deadline");
    expect(await journal()).to.deep.equal([`configmap/${id}`]);

    const heal = await rekindle("node", "heal", "worker-2", ...SIM);
    expect(heal.exitCode, heal.stderr).to.equal(0);
    expect(heal.stderr).to.include(`ended partition of worker-2`);
    expect(await journal()).to.deep.equal([]);
  });

  it("a stop's deadline bounds it: reap reverts it once the deadline passed, and the node is Ready again", async function () {
    const stop = await rekindle("node", "stop", "worker-1", ...SIM, "--for", "30s");
    expect(stop.exitCode, stop.stderr).to.equal(0);
    await new Promise((r) => setTimeout(r, 31_000));
    const reap = await rekindle("reap", "--kubeconfig", kubeconfig);
    expect(reap.exitCode, reap.stdout).to.equal(0);
    expect(reap.stdout).to.include("reverted stop of worker-1");
    expect(await journal()).to.deep.equal([]);
    await pollUntil(
      async () => {
        const r = await kubectl(kubeconfig, "get", "node", "worker-1", "--no-headers");
        return /\sReady\s/.test(r.stdout) ? true : undefined;
      },
      { what: "worker-1 Ready again", timeoutMs: 60_000, intervalMs: 500 },
    );
  });

  it("rekindle sim node partition|heal is an alias: journalled, and ended by heal", async function () {
    const partition = await rekindle("sim", "node", "partition", "worker-1", "--name", NAME);
    expect(partition.exitCode, partition.stderr).to.equal(0);
    expect(await journal()).to.deep.equal([`configmap/${partition.stdout.trim()}`]);
    expect((await rekindle("sim", "node", "heal", "worker-1", "--name", NAME)).exitCode).to.equal(0);
    expect(await journal()).to.deep.equal([]);
  });

  it("down --provider sim stops every process", async function () {
    const down = await rekindle("down", ...SIM);
    expect(down.exitCode, down.stderr).to.equal(0);
    expect(findProcessesByRunTag(runId)).to.deep.equal([]);
  });
});
