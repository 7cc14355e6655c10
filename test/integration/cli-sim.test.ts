// The local-reproduction workflow through the real CLI: `sim up` leaves a cluster running in the
// background, kubectl works against it, node operations act on it, `sim down` leaves nothing behind.
import { expect } from "chai";
import { execa } from "execa";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSimState } from "../../lib/cluster/sim/boot/state.js";
import { findProcessesByRunTag } from "../../lib/util/daemon.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { pollUntil } from "../../lib/util/time.js";
import { simCli } from "../support/sim-cli.js";

const stateDir = mkdtempSync(join(tmpdir(), "rekindle-cli-"));
const env = { ...process.env, REKINDLE_STATE_DIR: stateDir };
const bin = join(PROJECT_ROOT, "bin", "rekindle.js");

const { rekindle, kubectl } = simCli(env);

describe("rekindle sim CLI (background cluster)", function () {
  let kubeconfig = "";
  const runIds: string[] = [];

  after(async function () {
    // Whatever happened above, nothing may stay running.
    await rekindle("sim", "down", "--name", "it-cli");
    await rekindle("sim", "down", "--name", "it-cli-2");
    for (const runId of runIds) expect(findProcessesByRunTag(runId), runId).to.deep.equal([]);
  });

  it("sim up prints only the kubeconfig path on stdout and returns while the cluster keeps running", async function () {
    const up = await rekindle(
      "sim",
      "up",
      "--name",
      "it-cli",
      "--profile",
      "fast",
      "--workers",
      "2",
      "--zones",
      "1",
    );
    expect(up.exitCode, up.stderr).to.equal(0);
    kubeconfig = up.stdout.trim();
    expect(kubeconfig).to.equal(join(stateDir, "sim", "it-cli", "kubeconfig"));
    expect(up.stderr).to.include("kubectl --kubeconfig");
    runIds.push(readSimState(join(stateDir, "sim", "it-cli", "state.json")).runId);
  });

  it("kubectl get nodes works with that kubeconfig", async function () {
    const result = await kubectl(kubeconfig, "get", "nodes", "--no-headers");
    expect(result.exitCode, result.stderr).to.equal(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines.map((l) => l.split(/\s+/).slice(0, 2))).to.deep.equal([
      ["worker-1", "Ready"],
      ["worker-2", "Ready"],
    ]);
  });

  it("refuses a second cluster with the same name, saying how to stop the first", async function () {
    const again = await rekindle("sim", "up", "--name", "it-cli", "--profile", "fast");
    expect(again.exitCode).to.equal(1);
    expect(again.stderr)
      .to.include('sim cluster "it-cli" is already running')
      .and.include("rekindle sim down --name it-cli");
  });

  it("runs a second cluster side by side on other ports", async function () {
    const up = await rekindle(
      "sim",
      "up",
      "--name",
      "it-cli-2",
      "--profile",
      "fast",
      "--workers",
      "1",
      "--zones",
      "1",
    );
    expect(up.exitCode, up.stderr).to.equal(0);
    runIds.push(readSimState(join(stateDir, "sim", "it-cli-2", "state.json")).runId);
    const first = readSimState(join(stateDir, "sim", "it-cli", "state.json"));
    const second = readSimState(join(stateDir, "sim", "it-cli-2", "state.json"));
    expect(second.apiserverUrl).to.not.equal(first.apiserverUrl);
    const nodes = await kubectl(up.stdout.trim(), "get", "nodes", "-o", "name");
    expect(nodes.stdout.trim()).to.equal("node/worker-1");
    const down = await rekindle("sim", "down", "--name", "it-cli-2");
    expect(down.exitCode, down.stderr).to.equal(0);
    expect(findProcessesByRunTag(second.runId)).to.deep.equal([]);
    // The first cluster is untouched.
    expect((await rekindle("sim", "status", "--name", "it-cli")).exitCode).to.equal(0);
  });

  it("an unknown node is a clear error listing the cluster's nodes", async function () {
    const result = await rekindle("sim", "node", "stop", "worker-9", "--name", "it-cli");
    expect(result.exitCode).to.equal(2);
    expect(result.stderr).to.include('unknown node "worker-9"; valid: worker-1, worker-2');
  });

  it("an unknown node action is a clear error", async function () {
    const result = await rekindle("sim", "node", "reboot", "worker-1", "--name", "it-cli");
    expect(result.exitCode).to.equal(2);
    expect(result.stderr).to.include(
      'unknown node action "reboot"; valid: stop, start, partition, heal, clock, reregister',
    );
  });

  it("node stop makes the node NotReady; node start brings it back", async function () {
    expect((await rekindle("sim", "node", "stop", "worker-1", "--name", "it-cli")).exitCode).to.equal(0);
    const status = JSON.parse((await rekindle("sim", "status", "--name", "it-cli", "--json")).stdout) as {
      nodes: { name: string; power: string; processRunning: boolean }[];
    };
    expect(status.nodes.find((n) => n.name === "worker-1")).to.deep.include({
      power: "stopped",
      processRunning: false,
    });
    await pollUntil(
      async () => {
        const r = await kubectl(kubeconfig, "get", "node", "worker-1", "--no-headers");
        return r.stdout.includes("NotReady") ? true : undefined;
      },
      { what: "worker-1 NotReady in kubectl", timeoutMs: 60_000, intervalMs: 500 },
    );
    expect((await rekindle("sim", "node", "start", "worker-1", "--name", "it-cli")).exitCode).to.equal(0);
    await pollUntil(
      async () => {
        const r = await kubectl(kubeconfig, "get", "node", "worker-1", "--no-headers");
        return /\sReady\s/.test(r.stdout) ? true : undefined;
      },
      { what: "worker-1 Ready again in kubectl", timeoutMs: 60_000, intervalMs: 500 },
    );
  });

  it("partition freezes the node's lease; heal resumes it", async function () {
    expect((await rekindle("sim", "node", "partition", "worker-2", "--name", "it-cli")).exitCode).to.equal(0);
    const lease = async () =>
      (
        await kubectl(
          kubeconfig,
          "get",
          "lease",
          "-n",
          "kube-node-lease",
          "worker-2",
          "-o",
          "jsonpath={.spec.renewTime}",
        )
      ).stdout;
    const frozen = await lease();
    await new Promise((r) => setTimeout(r, 5_000)); // > 2 renew intervals in the fast profile
    expect(await lease()).to.equal(frozen);
    const partitionedTwice = await rekindle("sim", "node", "heal", "worker-1", "--name", "it-cli");
    expect(partitionedTwice.exitCode).to.equal(1);
    expect(partitionedTwice.stderr).to.include("worker-1 is not partitioned");
    expect((await rekindle("sim", "node", "heal", "worker-2", "--name", "it-cli")).exitCode).to.equal(0);
    await pollUntil(async () => ((await lease()) !== frozen ? true : undefined), {
      what: "worker-2 lease renewed after heal",
      timeoutMs: 20_000,
    });
  });

  it("node clock skews a node's kubelet clock until --offset 0, and status shows it", async function () {
    const set = await rekindle(
      "sim",
      "node",
      "clock",
      "worker-1",
      "--offset",
      "-20s",
      "--step",
      "--name",
      "it-cli",
    );
    expect(set.exitCode, set.stderr).to.equal(0);
    expect(set.stderr).to.include("rekindle sim node clock worker-1 --offset 0 --name it-cli");
    const status = await rekindle("sim", "status", "--name", "it-cli");
    expect(status.stdout).to.match(/node worker-1 .* running, clock -20s \(stepped\)/);
    expect(status.stdout).to.match(/sim-clock-webhook +pid \d+ +running/);
    const lagMs = async () => {
      const r = await kubectl(
        kubeconfig,
        "get",
        "lease",
        "-n",
        "kube-node-lease",
        "worker-1",
        "-o",
        "jsonpath={.spec.renewTime}",
      );
      return Date.now() - Date.parse(r.stdout);
    };
    // Stepped: the next renewal (every 2 s at the fast profile) is written 20 s back.
    await pollUntil(async () => ((await lagMs()) >= 19_000 ? true : undefined), {
      what: "worker-1's renewTime 20 s behind",
      timeoutMs: 15_000,
      intervalMs: 250,
    });
    const clear = await rekindle("sim", "node", "clock", "worker-1", "--offset", "0", "--name", "it-cli");
    expect(clear.exitCode, clear.stderr).to.equal(0);
    await pollUntil(async () => ((await lagMs()) < 4_000 ? true : undefined), {
      what: "worker-1's renewTime true again",
      timeoutMs: 15_000,
      intervalMs: 250,
    });
    expect((await rekindle("sim", "status", "--name", "it-cli")).stdout).to.not.include("clock -20s");
  });

  it("apiserver pause --for holds it frozen in the foreground; Ctrl-C continues it at once and exits 130", async function () {
    const pause = execa(
      process.execPath,
      [bin, "sim", "apiserver", "pause", "--for", "60s", "--name", "it-cli"],
      {
        env,
        reject: false,
      },
    );
    await pollUntil(
      async () =>
        (await rekindle("sim", "status", "--name", "it-cli")).stdout.includes("PAUSED") ? true : undefined,
      { what: "the pause to start", timeoutMs: 20_000, intervalMs: 250 },
    );
    const frozen = await kubectl(kubeconfig, "get", "nodes", "--request-timeout=2s");
    expect(frozen.exitCode).to.not.equal(0);
    pause.kill("SIGINT");
    const ended = await pause;
    expect(ended.exitCode, ended.stderr).to.equal(130);
    const answered = await kubectl(kubeconfig, "get", "nodes", "--request-timeout=5s");
    expect(answered.exitCode, answered.stderr).to.equal(0);
    expect((await rekindle("sim", "status", "--name", "it-cli")).stdout).to.not.include("PAUSED");
  });

  it("node reregister prints the node's new UID", async function () {
    const uid = async () =>
      (await kubectl(kubeconfig, "get", "node", "worker-2", "-o", "jsonpath={.metadata.uid}")).stdout;
    const before = await uid();
    const result = await rekindle("sim", "node", "reregister", "worker-2", "--name", "it-cli");
    expect(result.exitCode, result.stderr).to.equal(0);
    expect(result.stdout.trim()).to.equal(await uid());
    expect(result.stdout.trim()).to.not.equal(before);
  });

  it("sim down stops every process and keeps the logs", async function () {
    const state = readSimState(join(stateDir, "sim", "it-cli", "state.json"));
    const down = await rekindle("sim", "down", "--name", "it-cli");
    expect(down.exitCode, down.stderr).to.equal(0);
    expect(down.stderr).to.include(join(stateDir, "sim", "it-cli", "logs"));
    expect(findProcessesByRunTag(state.runId)).to.deep.equal([]);
    const status = await rekindle("sim", "status", "--name", "it-cli");
    expect(status.exitCode).to.equal(1);
  });
});
