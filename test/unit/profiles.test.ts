import { expect } from "chai";
import { RekindleError } from "../../lib/errors.js";
import { TIMING_PROFILES, timingProfile } from "../../lib/cluster/profiles.js";

describe("timing profiles", function () {
  it("default carries the upstream numbers", function () {
    const p = timingProfile("default");
    expect([
      p.nodeLeaseDurationSeconds,
      p.nodeMonitorGracePeriodSeconds,
      p.nodeMonitorPeriodSeconds,
    ]).to.deep.equal([40, 50, 5]);
    expect([p.defaultNotReadyTolerationSeconds, p.defaultUnreachableTolerationSeconds]).to.deep.equal([
      300, 300,
    ]);
  });

  it("every profile keeps the grace period several lease renewals long", function () {
    for (const profile of Object.values(TIMING_PROFILES)) {
      const renew = profile.nodeLeaseDurationSeconds / 4;
      expect(profile.nodeMonitorGracePeriodSeconds / renew, profile.name).to.be.at.least(4);
    }
  });

  it("rejects an unknown profile, naming the valid ones", function () {
    expect(() => timingProfile("slow"))
      .to.throw(RekindleError, 'unknown profile "slow"; valid: default, fast')
      .with.property("code", "INVALID_INPUT");
  });
});
