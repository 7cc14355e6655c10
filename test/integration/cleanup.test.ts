// Nothing is left running: Ctrl-C of a process that started a cluster stops the cluster, and after
// a crash (SIGKILL, no chance to clean up) `rekindle sim down --name <dir>` finds every process.
import { expect } from "chai";
import { execa, type ResultPromise } from "execa";
import { join } from "node:path";
import { readSimState } from "../../lib/cluster/sim/boot/state.js";
import { findProcessesByRunTag } from "../../lib/util/daemon.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { testRunDir } from "../support/run-dir.js";

function holdCluster(root: string): { child: ResultPromise; ready: Promise<string> } {
  const child = execa(
    process.execPath,
    ["--import", "tsx", join(PROJECT_ROOT, "test", "support", "hold-cluster.ts"), root],
    { reject: false, buffer: false },
  );
  const ready = new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    void child.then((r) => {
      reject(new Error(`hold-cluster exited early with ${String(r.exitCode)}`));
    });
  });
  return { child, ready };
}

describe("cleanup after interruption", function () {
  it("Ctrl-C (SIGINT) stops every process of the cluster and exits 130", async function () {
    const root = join(testRunDir("sigint"), "cluster");
    const { child, ready } = holdCluster(root);
    const runId = await ready;
    expect(findProcessesByRunTag(runId).length).to.be.at.least(7);
    child.kill("SIGINT");
    const result = await child;
    expect(result.exitCode).to.equal(130);
    expect(findProcessesByRunTag(runId)).to.deep.equal([]);
  });

  it("after a crash, `rekindle sim down --name <dir>` stops what was left", async function () {
    const root = join(testRunDir("crash"), "cluster");
    const { child, ready } = holdCluster(root);
    const runId = await ready;
    child.kill("SIGKILL");
    await child;
    // Detached daemons survive their parent's SIGKILL: the state file knows them.
    expect(findProcessesByRunTag(runId).length).to.be.at.least(7);
    expect(readSimState(join(root, "state.json")).runId).to.equal(runId);
    const down = await execa(
      process.execPath,
      [join(PROJECT_ROOT, "bin", "rekindle.js"), "sim", "down", "--name", root],
      { reject: false },
    );
    expect(down.exitCode, down.stderr).to.equal(0);
    expect(findProcessesByRunTag(runId)).to.deep.equal([]);
  });
});
