import { expect } from "chai";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ForcedDetachLog, forcedDetachesIn } from "../../lib/observe/forced-detach.js";
import { LogFollower, parseKlogLine } from "../../lib/observe/klog.js";

// Lines as kube-controller-manager v1.34 writes them (reconciler.go, structured klog).
const TIMEOUT_LINE =
  'I1122 19:46:07.250123  4242 reconciler.go:265] "attacherDetacher.DetachVolume started: this volume is not safe to detach, but maxWaitForUnmountDuration expired, force detaching" logger="persistentvolume-attach-detach-controller" duration="6m0s" node="worker-2" volumeName="kubernetes.io/csi/sim.csi.rekindle.dev^sim-1234"';
const OUT_OF_SERVICE_LINE =
  'I1122 19:47:01.000001  4242 reconciler.go:272] "attacherDetacher.DetachVolume started: node has out-of-service taint, force detaching" logger="persistentvolume-attach-detach-controller" node="worker-1" volumeName="kubernetes.io/csi/sim.csi.rekindle.dev^sim-5678"';
const NORMAL_LINE =
  'I1122 19:48:00.000000  4242 reconciler.go:250] "attacherDetacher.DetachVolume started" logger="persistentvolume-attach-detach-controller" node="worker-3" volumeName="x"';

describe("klog lines and forced detaches", function () {
  const now = new Date(2026, 10, 22, 20, 0, 0);

  it("parses the header time (local, this year), the message and quoted fields", function () {
    const entry = parseKlogLine(TIMEOUT_LINE, now);
    expect(entry?.atMs).to.equal(new Date(2026, 10, 22, 19, 46, 7, 250).getTime());
    expect(entry?.severity).to.equal("I");
    expect(entry?.fields["node"]).to.equal("worker-2");
    expect(entry?.fields["duration"]).to.equal("6m0s");
    expect(entry?.message).to.match(/^attacherDetacher\.DetachVolume started: this volume/);
  });

  it("puts a line from late December in last year when read in early January", function () {
    const entry = parseKlogLine(TIMEOUT_LINE.replace("I1122", "I1231"), new Date(2027, 0, 1, 0, 5));
    expect(new Date(entry?.atMs ?? 0).getFullYear()).to.equal(2026);
  });

  it("ignores lines that are not klog", function () {
    expect(parseKlogLine("panic: something")).to.equal(undefined);
  });

  it("finds forced detaches with their reason, node and volume, and nothing else", function () {
    const found = forcedDetachesIn([NORMAL_LINE, TIMEOUT_LINE, "garbage", OUT_OF_SERVICE_LINE], now);
    expect(found.map((d) => [d.reason, d.node, d.volume])).to.deep.equal([
      ["timeout", "worker-2", "kubernetes.io/csi/sim.csi.rekindle.dev^sim-1234"],
      ["out-of-service", "worker-1", "kubernetes.io/csi/sim.csi.rekindle.dev^sim-5678"],
    ]);
  });

  it("turns forced detaches on the lost node after the fault into milestones, the first of each reason", function () {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-klog-"));
    try {
      const path = join(dir, "kcm.log");
      writeFileSync(path, `${TIMEOUT_LINE}\n`); // before the log is followed: not read
      const log = new ForcedDetachLog(path);
      appendFileSync(path, `${TIMEOUT_LINE.replace("19:46:07", "19:46:09")}\n${OUT_OF_SERVICE_LINE}\n`);
      const fault = parseKlogLine(TIMEOUT_LINE)?.atMs ?? 0;
      expect(log.milestones(fault, "worker-2")).to.deep.equal([
        { name: "forced-detach:timeout", atMs: 2000, node: "worker-2" },
      ]);
      expect(log.milestones(fault, "worker-1").map((m) => m.name)).to.deep.equal([
        "forced-detach:out-of-service",
      ]);
      expect(new ForcedDetachLog(undefined).milestones(0, "worker-1")).to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("follows a growing file from where it stood, whole lines only", function () {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-klog-"));
    try {
      const path = join(dir, "kcm.log");
      writeFileSync(path, "old line\n");
      const follower = new LogFollower(path);
      expect(follower.readLines()).to.deep.equal([]);
      appendFileSync(path, "first\nsecond (half");
      expect(follower.readLines()).to.deep.equal(["first"]);
      appendFileSync(path, " written)\n");
      expect(follower.readLines()).to.deep.equal(["second (half written)"]);
      writeFileSync(path, "after truncation\n");
      expect(follower.readLines()).to.deep.equal(["after truncation"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
