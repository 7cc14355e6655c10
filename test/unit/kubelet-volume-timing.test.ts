// The arithmetic of when a real kubelet mounts an attachable volume (kubelet-volume-timing.ts): its
// checks' backoff, the worst wait after an attach, and each node's status-write phase.
import { expect } from "chai";
import {
  firstCheckAtOrAfterMs,
  nextStatusWriteMs,
  statusPhaseMs,
  worstAttachSeenMs,
} from "../../lib/cluster/kubelet-volume-timing.js";

describe("kubelet volume timing", function () {
  it("checks at 0, 0.5, 1.5, 3.5, 7.5, 15.5 s…: the first check at or after the volume is ready", function () {
    expect([0, 1, 500, 501, 1500, 3000, 7500, 7501, 10_000].map(firstCheckAtOrAfterMs)).to.deep.equal([
      0, 500, 500, 1500, 1500, 3500, 7500, 15_500, 15_500,
    ]);
  });

  it("waits at most 2 min 2 s between checks: an attach after the 6-minute forced detach is seen at 371.5 s", function () {
    // 0.5 … 127.5 s doubling, then 122 s apart: 249.5, 371.5.
    expect(firstCheckAtOrAfterMs(130_000)).to.equal(249_500);
    expect(firstCheckAtOrAfterMs(360_000)).to.equal(371_500);
  });

  it("at a 10 s status cadence a pod can wait 15.5 s after its attach", function () {
    expect(worstAttachSeenMs(10_000)).to.equal(15_500);
    expect(worstAttachSeenMs(1000)).to.equal(1500);
  });

  it("gives each node a stable phase within the interval, and its next write after now on that phase", function () {
    const phases = ["worker-1", "worker-2", "worker-3", "worker-1000"].map((n) => statusPhaseMs(n, 10_000));
    for (const p of phases) expect(p).to.be.within(0, 9999);
    expect(new Set(phases).size, "nodes spread over the interval").to.equal(4);
    expect(statusPhaseMs("worker-2", 10_000)).to.equal(phases[1]);
    const now = 1_795_000_123_456;
    for (const node of ["worker-1", "worker-2"]) {
      const next = nextStatusWriteMs(node, now, 10_000);
      expect(next).to.be.above(now);
      expect(next - now).to.be.at.most(10_000);
      expect((next - statusPhaseMs(node, 10_000)) % 10_000).to.equal(0);
      // A write due exactly now is not "next".
      expect(nextStatusWriteMs(node, next, 10_000)).to.equal(next + 10_000);
    }
  });
});
