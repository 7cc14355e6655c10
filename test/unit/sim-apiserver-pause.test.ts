import { expect } from "chai";
import {
  activePause,
  PAUSE_BACKSTOP_GRACE_MS,
  validatePauseMs,
} from "../../lib/cluster/sim/hostile/apiserver-pause.js";
import type { SimClusterState } from "../../lib/cluster/sim/boot/state.js";
import { RekindleError } from "../../lib/errors.js";

/** Only the field activePause reads. */
function stateWithPause(until: string | undefined): SimClusterState {
  return (until === undefined ? {} : { apiserverPause: { until, backstop: undefined } }) as SimClusterState;
}

describe("sim kube-apiserver pause", function () {
  it("counts a pause as on until its end plus the backstop's grace, stale after (its holder was killed)", function () {
    const until = "2026-01-02T03:04:05.000Z";
    const end = Date.parse(until);
    expect(activePause(stateWithPause(undefined), end)).to.equal(undefined);
    expect(activePause(stateWithPause(until), end - 10_000)?.until).to.equal(until);
    expect(activePause(stateWithPause(until), end + PAUSE_BACKSTOP_GRACE_MS)?.until).to.equal(until);
    expect(activePause(stateWithPause(until), end + PAUSE_BACKSTOP_GRACE_MS + 1)).to.equal(undefined);
  });

  it("takes pauses longer than 0 and at most an hour", function () {
    for (const bad of [0, -1, Number.NaN, 3_600_001]) {
      expect(() => {
        validatePauseMs(bad);
      }, String(bad)).to.throw(RekindleError, "more than 0 and at most an hour");
    }
    expect(() => {
      validatePauseMs(3_600_000);
    }).to.not.throw();
  });
});
