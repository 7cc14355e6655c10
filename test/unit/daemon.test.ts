import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  findProcessesByRunTag,
  isDaemonRunning,
  signalDaemon,
  spawnDaemon,
  stopDaemon,
} from "../../lib/util/daemon.js";
import { pollUntil } from "../../lib/util/time.js";

describe("daemon processes", function () {
  const dir = mkdtempSync(join(tmpdir(), "rekindle-daemon-"));
  const tag = `unit-${process.pid}-${Date.now()}`;

  it("starts detached with its output in the log, findable by run tag, and stops", async function () {
    const record = spawnDaemon(
      {
        name: "sleeper",
        command: "sh",
        args: ["-c", "echo started; exec sleep 30"],
        logPath: join(dir, "sleeper.log"),
      },
      tag,
    );
    expect(isDaemonRunning(record)).to.equal(true);
    // A loaded machine may not have exec'd the command yet (until then /proc shows the parent's
    // environment, without the tag) nor run the echo: wait for the line before looking.
    const log = join(dir, "sleeper.log");
    await pollUntil(async () => Promise.resolve(readFileSync(log, "utf8").includes("started") || undefined), {
      what: "the daemon's first line in its log",
      timeoutMs: 8_000,
      intervalMs: 20,
    });
    // Right after the echo the shell exec's sleep, and /proc/<pid>/environ can read empty or fail
    // while the new image replaces the old: the tag shows again once the exec is done.
    await pollUntil(() => Promise.resolve(findProcessesByRunTag(tag).includes(record.pid) || undefined), {
      what: "the daemon found by its run tag",
      timeoutMs: 8_000,
      intervalMs: 20,
    });
    await stopDaemon(record, 2_000);
    expect(isDaemonRunning(record)).to.equal(false);
    expect(findProcessesByRunTag(tag)).to.deep.equal([]);
    expect(readFileSync(log, "utf8")).to.include("started");
  });

  it("never signals a recycled pid: the start time must match", async function () {
    const record = spawnDaemon(
      { name: "sleeper2", command: "sleep", args: ["30"], logPath: join(dir, "sleeper2.log") },
      tag,
    );
    const impostor = { pid: record.pid, startTicks: record.startTicks + 1 };
    expect(isDaemonRunning(impostor)).to.equal(false);
    expect(signalDaemon(impostor, "SIGKILL")).to.equal(false);
    expect(isDaemonRunning(record)).to.equal(true);
    await stopDaemon(record, 2_000);
  });

  it("SIGSTOP and SIGCONT leave the process alive; stop still ends a stopped process", async function () {
    const record = spawnDaemon(
      { name: "sleeper3", command: "sleep", args: ["30"], logPath: join(dir, "sleeper3.log") },
      tag,
    );
    expect(signalDaemon(record, "SIGSTOP")).to.equal(true);
    expect(isDaemonRunning(record)).to.equal(true);
    await stopDaemon(record, 2_000);
    expect(isDaemonRunning(record)).to.equal(false);
  });
});
