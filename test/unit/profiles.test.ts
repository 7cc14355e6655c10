import { expect } from "chai";
import { RekindleError } from "../../lib/errors.js";
import { readFileSync } from "node:fs";
import { KIND_MONITORING_INTERVAL_MS } from "../../lib/cluster/kind/cluster.js";
import { DEFAULT_KIND_CONFIG, renderKindConfig } from "../../lib/cluster/kind/config.js";
import { KIND_CONFIG_KUBELET, TIMING_PROFILES, timingProfile } from "../../lib/cluster/profiles.js";

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

describe("the sim kubelet's settings", function () {
  it("are kind-config.yaml's in every profile, so sim and kind runs compare like with like", function () {
    const rendered = renderKindConfig(readFileSync(DEFAULT_KIND_CONFIG, "utf8"), TIMING_PROFILES.fast);
    const { pressureTransitionPeriodMs, statusUpdateIntervalMs, shutdownGracePeriodMs } = rendered.kubelet;
    expect(KIND_CONFIG_KUBELET).to.deep.equal({
      pressureTransitionPeriodMs,
      monitoringIntervalMs: KIND_MONITORING_INTERVAL_MS,
      statusUpdateIntervalMs,
      shutdownGracePeriodMs,
    });
    for (const profile of Object.values(TIMING_PROFILES)) {
      expect(profile.simKubelet, profile.name).to.deep.equal(KIND_CONFIG_KUBELET);
    }
  });
});
