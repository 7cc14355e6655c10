// The arithmetic of when a real kubelet mounts an attachable volume (kubelet-volume-timing.ts): the
// worst wait after an attach, and each node's status-write phase.
import { expect } from "chai";
import {
  nextStatusWriteMs,
  statusPhaseMs,
  worstAttachSeenMs,
} from "../../lib/cluster/kubelet-volume-timing.js";

describe("kubelet volume timing", function () {
  it("at a 10 s status cadence a pod can wait 10.1 s after its attach: the next status write, then the reconciler's look", function () {
    expect(worstAttachSeenMs(10_000)).to.equal(10_100);
    expect(worstAttachSeenMs(1000)).to.equal(1100);
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
