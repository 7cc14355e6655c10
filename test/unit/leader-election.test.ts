import { expect } from "chai";
import { LeaderElector } from "../../lib/controller/leader.js";
import { FakeLeaseServer } from "../support/fake-lease-server.js";

describe("controller: leader election on each replica's own clock", function () {
  const server = new FakeLeaseServer();
  before(() => server.start());
  after(() => server.stop());
  beforeEach(() => {
    server.leases.clear();
    server.fail = false;
  });

  /** A replica with its own fake clock (ms), offset from the others as a skewed machine's would be. */
  function replica(identity: string, clock: { now: number }) {
    return new LeaderElector({
      kc: server.kubeConfig(),
      namespace: "ns",
      identity,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      now: () => clock.now,
    });
  }

  it("a standby whose clock runs an hour ahead never takes over a Lease that is renewed", async function () {
    const a = { now: Date.parse("2026-01-01T00:00:00Z") };
    const b = { now: a.now + 3_600_000 };
    const leader = replica("a", a);
    const standby = replica("b", b);
    expect(await leader.tryAcquireOrRenew()).to.equal(true);
    for (let i = 0; i < 20; i++) {
      a.now += 2_000;
      b.now += 2_000;
      expect(await leader.tryAcquireOrRenew()).to.equal(true);
      expect(await standby.tryAcquireOrRenew(), `round ${i}`).to.equal(false);
    }
    expect(leader.isLeader).to.equal(true);
    expect(standby.isLeader).to.equal(false);
  });

  it("takes over only after seeing the Lease unchanged for a whole leaseDuration", async function () {
    const a = { now: Date.parse("2026-01-01T00:00:00Z") };
    const b = { now: a.now - 600_000 }; // ten minutes behind: a renewTime "from the future"
    const leader = replica("a", a);
    const standby = replica("b", b);
    await leader.tryAcquireOrRenew();
    // The leader dies. The standby watches every 2 s.
    const tookOverAfter: number[] = [];
    for (let waited = 0; waited <= 20_000; waited += 2_000) {
      if (await standby.tryAcquireOrRenew()) {
        tookOverAfter.push(waited);
        break;
      }
      b.now += 2_000;
    }
    expect(tookOverAfter).to.deep.equal([16_000]);
  });

  it("a leader that cannot renew stops leading at the renew deadline, before a standby may take over", async function () {
    const clock = { now: Date.parse("2026-01-01T00:00:00Z") };
    const leader = replica("a", clock);
    await leader.tryAcquireOrRenew();
    const term = leader.signal;
    expect(term.aborted).to.equal(false);
    expect(leader.safeActionMs()).to.equal(13_000);
    server.fail = true;
    clock.now += 6_000;
    expect(await leader.tryAcquireOrRenew(), "a failed renewal within the deadline").to.equal(true);
    expect(leader.safeActionMs()).to.equal(7_000);
    clock.now += 4_000;
    expect(leader.isLeader).to.equal(false);
    expect(leader.signal.aborted).to.equal(true);
    expect(await leader.tryAcquireOrRenew()).to.equal(false);
    expect(term.aborted, "the term's signal aborts: driver calls in flight are cancelled").to.equal(true);
  });

  it("refuses settings in which a leader could act after a standby took over", function () {
    expect(
      () =>
        new LeaderElector({
          kc: server.kubeConfig(),
          namespace: "ns",
          identity: "x",
          leaseDurationMs: 10_000,
          renewDeadlineMs: 12_000,
        }),
    ).to.throw(/retryPeriod < renewDeadline < leaseDuration/);
  });
});
