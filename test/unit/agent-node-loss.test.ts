// The agent's node loss run for real in a temporary root: live `sleep` processes stand for pod
// containers, a fake /proc gives each its cgroup (v1 and v2 lines, both cgroup drivers) and a fake
// systemctl records the units. Every pod process but the agent's own pod's is SIGKILLed, after
// the kubelet and runtime are stopped, and the answer counts what was stopped.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { stopThroughAgent } from "../../lib/agent/capabilities.js";
import { containersStopped, killPodsScript, stopApplyScript } from "../../lib/agent/node-ops.js";
import type { AgentAction, AgentStatus } from "../../lib/agent/protocol.js";
import { rekindleRejection } from "../support/assertions.js";

const AGENT_UID = "0a1b2c3d-1111-2222-3333-444455556666";
const POD_A = "aaaaaaaa-0000-1111-2222-333333333333";
const POD_B = "bbbbbbbb-0000-1111-2222-333333333333";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function sh(script: string, env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve) => {
    execFile("/bin/sh", ["-c", script], { env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: stdout.trim(), stderr: stderr.trim() });
    });
  });
}

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

describe("agent node loss: the node's containers stopped too", function () {
  let root = "";
  let proc = "";
  const children: ChildProcess[] = [];

  /** A live process with `cgroup` as its /proc/<pid>/cgroup in the fake /proc. */
  function process_(cgroup: string): ChildProcess {
    const child = spawn("sleep", ["300"], { stdio: "ignore" });
    children.push(child);
    const dir = join(proc, String(child.pid));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "cgroup"), cgroup);
    writeFileSync(join(dir, "stat"), `${child.pid} (sleep) S 1 1 1 0`);
    return child;
  }

  beforeEach(function () {
    root = mkdtempSync(join(tmpdir(), "agent-node-loss-"));
    proc = join(root, "proc");
    mkdirSync(proc);
  });

  afterEach(function () {
    for (const child of children.splice(0)) child.kill("SIGKILL");
  });

  /** Two pods' containers (v1 cgroupfs, v2 systemd), the agent's pod, a shim outside kubepods. */
  function node() {
    const v1 = (uid: string, container: string) =>
      `12:memory:/kubepods/besteffort/pod${uid}/${container}\n1:name=systemd:/kubepods/besteffort/pod${uid}/${container}\n0::/\n`;
    const v2 = (uid: string, container: string) =>
      `0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-pod${uid.replaceAll("-", "_")}.slice/cri-containerd-${container}.scope\n`;
    return {
      writer: [process_(v1(POD_A, "c-writer")), process_(v1(POD_A, "c-writer"))],
      sandboxA: process_(v1(POD_A, "c-pause")),
      other: process_(v2(POD_B, "c-other")),
      agent: [process_(v2(AGENT_UID, "c-agent")), process_(v1(AGENT_UID, "c-agent-pause"))],
      shim: process_("12:memory:/system.slice/containerd.service\n0::/system.slice/containerd.service\n"),
    };
  }

  async function settle(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }

  it("SIGKILLs every pod process but the agent's pod's, and counts containers, processes and pods", async function () {
    const n = node();
    const run = await sh(killPodsScript(AGENT_UID, proc));
    await settle();
    expect(run, run.stderr).to.include({ code: 0 });
    expect(run.stdout).to.equal("stopped 3 containers (4 processes) in 2 pods");
    expect(containersStopped(run.stdout)).to.equal(3);
    for (const child of [...n.writer, n.sandboxA, n.other])
      expect(alive(child), "a pod process").to.equal(false);
    for (const child of [...n.agent, n.shim]) expect(alive(child), "spared").to.equal(true);
  });

  it("finds the agent's pod from its own cgroup when no POD_UID is given", async function () {
    const n = node();
    // The script's own shell stands in the agent's pod (its /proc entry made before the script runs).
    const own = `mkdir -p ${proc}/$$; echo '0::/kubepods.slice/kubepods-pod${AGENT_UID.replaceAll("-", "_")}.slice/cri-containerd-self.scope' > ${proc}/$$/cgroup\n`;
    const run = await sh(own + killPodsScript("", proc));
    await settle();
    expect(run, run.stderr).to.include({ code: 0, stdout: "stopped 3 containers (4 processes) in 2 pods" });
    for (const child of n.agent) expect(alive(child)).to.equal(true);
    expect(alive(n.other)).to.equal(false);
  });

  it("refuses, killing nothing, when it cannot tell its own pod or its own cgroup is another pod's", async function () {
    const n = node();
    const unknown = await sh(killPodsScript("", proc));
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include("cannot tell its own pod");
    const own = `mkdir -p ${proc}/$$; echo '0::/kubepods/pod${POD_B}/x' > ${proc}/$$/cgroup\n`;
    const wrong = await sh(own + killPodsScript(AGENT_UID, proc));
    expect(wrong.code).to.equal(1);
    expect(wrong.stderr).to.include(`is not pod ${AGENT_UID}'s`);
    await settle();
    for (const child of [...n.writer, n.sandboxA, n.other, ...n.agent]) expect(alive(child)).to.equal(true);
  });

  it("with nothing but the agent on the node: stopped 0 containers", async function () {
    process_(`0::/kubepods/pod${AGENT_UID}/c-agent\n`);
    const run = await sh(killPodsScript(AGENT_UID, proc));
    expect(run).to.include({ code: 0, stdout: "stopped 0 containers (0 processes) in 0 pods" });
  });

  it("node loss: kubelet, then runtime stopped while the pods still run, then the pods killed; the answer says both", async function () {
    const n = node();
    const bin = join(root, "bin");
    const state = join(root, "state");
    mkdirSync(bin);
    mkdirSync(state);
    const log = join(root, "systemctl.log");
    const pid = n.writer[0]?.pid ?? 0;
    // is-active: kubelet and containerd run, the other runtimes do not; stop: logs whether the writer lives.
    writeFileSync(
      join(bin, "systemctl"),
      `#!/bin/sh
case "$1 $3" in
  "is-active kubelet"|"is-active containerd") exit 0 ;;
  is-active*) exit 3 ;;
esac
kill -0 ${pid} 2>/dev/null && w=alive || w=dead
echo "$* writer=$w" >> ${log}
`,
    );
    chmodSync(join(bin, "systemctl"), 0o755);
    const run = await sh(stopApplyScript(AGENT_UID, state, proc), {
      ...process.env,
      PATH: `${bin}:${process.env["PATH"] ?? ""}`,
    });
    await settle();
    expect(run, run.stderr).to.include({
      code: 0,
      stdout: "stopped kubelet containerd; stopped 3 containers (4 processes) in 2 pods",
    });
    expect(readFileSync(log, "utf8").trim().split("\n")).to.deep.equal([
      "stop kubelet writer=alive",
      "stop containerd writer=alive",
    ]);
    expect(readFileSync(join(state, "stopped-units"), "utf8")).to.equal("kubelet\ncontainerd\n");
    expect(alive(n.writer[0] ?? n.shim)).to.equal(false);
    for (const child of n.agent) expect(alive(child)).to.equal(true);
  });

  it("reads the count back from an answer, and none from an agent that stops no containers", function () {
    expect(
      containersStopped(
        "applied until x: stopped kubelet containerd; stopped 7 containers (9 processes) in 3 pods",
      ),
    ).to.equal(7);
    expect(containersStopped("applied until x: kubelet containerd")).to.equal(undefined);
  });
});

describe("node loss through the agent: refused from an agent that leaves the containers running", function () {
  /** A client whose agent answers a stop with `message`; records what was asked. */
  function client(message: string) {
    const asked: string[] = [];
    const status = (state: AgentStatus["state"], text: string): AgentStatus => ({
      state,
      message: text,
      at: "2026-11-24T10:00:00.000Z",
      answers: "x",
    });
    return {
      asked,
      apply: (node: string, action: AgentAction) => {
        asked.push(`apply ${action} ${node}`);
        return Promise.resolve(status("applied", message));
      },
      revert: (node: string, action: AgentAction) => {
        asked.push(`revert ${action} ${node}`);
        return Promise.resolve(status("reverted", "reverted"));
      },
    };
  }

  it("an agent that counts the containers it stopped: the stop stands", async function () {
    const agent = client(
      "applied until x: stopped kubelet containerd; stopped 5 containers (7 processes) in 2 pods",
    );
    await stopThroughAgent(agent, "w1", new Date());
    expect(agent.asked).to.deep.equal(["apply stop w1"]);
  });

  it("an older agent (kubelet and runtime only): undone at once, then refused with the reason", async function () {
    const agent = client("applied until x: kubelet containerd");
    const error = await rekindleRejection(stopThroughAgent(agent, "w1", new Date()));
    expect(agent.asked).to.deep.equal(["apply stop w1", "revert stop w1"]);
    expect(error.code).to.equal("PRECONDITION");
    expect(error.message).to.include("stopped the kubelet and runtime but not the node's containers");
    expect(error.message).to.include("two writers");
  });
});
