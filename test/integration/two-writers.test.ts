// The two-writer check against the real writer: two processes of the Go writer (built with the
// harness's build code) appending to one log, first at once, then one after the other.
import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureWriterBinary } from "../../lib/cluster/kind/writer/build.js";
import { twoWriterOverlaps } from "../../lib/observe/two-writers.js";
import { parseWriterLog, type WriterRecord } from "../../lib/observe/writer-log.js";
import { silentProgress } from "../../lib/util/progress.js";
import { until } from "../support/until.js";

interface Running {
  child: ChildProcess;
  podUid: string;
}

describe("the two-writer check on two real writer processes", function () {
  let dir: string;
  let writer: string;
  const started: ChildProcess[] = [];

  before(async function () {
    // A cold build of the standard-library-only writer takes seconds; a busy machine needs more.
    this.timeout(300_000);
    dir = mkdtempSync(join(tmpdir(), "two-writers-"));
    writer = (await ensureWriterBinary({ cacheDir: join(dir, "cache"), progress: silentProgress })).path;
  });

  afterEach(function () {
    for (const child of started.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  });

  after(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  const records = (log: string, podUid?: string): WriterRecord[] =>
    parseWriterLog(readFileSync(log, "utf8")).records.filter(
      (r) => podUid === undefined || r.podUid === podUid,
    );

  function start(log: string, podUid: string, node: string): Running {
    const child = spawn(writer, ["--log", log], {
      env: { PATH: process.env["PATH"] ?? "", POD_UID: podUid, NODE_NAME: node },
      stdio: ["ignore", "ignore", "inherit"],
    });
    started.push(child);
    return { child, podUid };
  }

  async function awaitRecords(log: string, podUid: string, count: number): Promise<void> {
    await until(
      () => {
        try {
          return records(log, podUid).length >= count;
        } catch {
          return false; // the log is not there yet
        }
      },
      `${count} records of writer ${podUid}`,
      { timeoutMs: 20_000, intervalMs: 20 },
    );
  }

  /** SIGTERM, and the exit code the writer ends with. */
  async function stop(w: Running): Promise<number | null> {
    const exited = once(w.child, "exit") as Promise<[number | null, string | null]>;
    w.child.kill("SIGTERM");
    const [code] = await exited;
    return code;
  }

  it("reports one overlap spanning the time both wrote, and exits cleanly on SIGTERM", async function () {
    this.timeout(30_000);
    const log = join(dir, "overlap.log");
    const a = start(log, "uid-a", "node-1");
    await awaitRecords(log, "uid-a", 5);
    const bStartedMs = Date.now();
    const b = start(log, "uid-b", "node-2");
    // About a second of both: ten of b's records, a still writing.
    await awaitRecords(log, "uid-b", 10);
    expect(await stop(a), "writer a's exit code").to.equal(0);
    const aStoppedMs = Date.now();
    const bCount = records(log, "uid-b").length;
    await awaitRecords(log, "uid-b", bCount + 3);
    expect(await stop(b), "writer b's exit code").to.equal(0);

    const parsed = parseWriterLog(readFileSync(log, "utf8"));
    expect(parsed.corrupt).to.deep.equal([]);
    expect(parsed.tornLastLine).to.equal(undefined);
    const overlaps = twoWriterOverlaps(parsed);
    expect(overlaps).to.have.length(1);
    const [overlap] = overlaps;
    const aRecords = records(log, "uid-a");
    const bRecords = records(log, "uid-b");
    // From b's first record to a's last, both as their writers stamped them.
    expect(overlap?.startMs).to.equal((bRecords[0]?.wallUs ?? 0) / 1000);
    expect(overlap?.endMs).to.equal((aRecords[aRecords.length - 1]?.wallUs ?? 0) / 1000);
    expect(overlap?.startMs).to.be.at.least(bStartedMs);
    expect(overlap?.endMs).to.be.at.most(aStoppedMs);
    expect(overlap?.evidence).to.equal("interleaved");
    const [sideA, sideB] = overlap?.writers ?? [];
    expect([sideA?.podUid, sideA?.node, sideB?.podUid, sideB?.node]).to.deep.equal([
      "uid-a",
      "node-1",
      "uid-b",
      "node-2",
    ]);
    // b wrote at least its ten records while a ran; a kept writing beside it.
    expect(sideB?.records).to.be.at.least(9);
    expect(sideA?.records).to.be.at.least(8);
  });

  it("reports none when the second writer starts after the first has stopped", async function () {
    this.timeout(30_000);
    const log = join(dir, "handover.log");
    const a = start(log, "uid-a", "node-1");
    await awaitRecords(log, "uid-a", 5);
    expect(await stop(a)).to.equal(0);
    const b = start(log, "uid-b", "node-2");
    await awaitRecords(log, "uid-b", 5);
    expect(await stop(b)).to.equal(0);
    const parsed = parseWriterLog(readFileSync(log, "utf8"));
    expect(parsed.records.length).to.be.at.least(10);
    expect(twoWriterOverlaps(parsed)).to.deep.equal([]);
  });
});
