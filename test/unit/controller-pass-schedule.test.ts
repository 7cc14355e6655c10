// When the next pass runs: a check interval after this one, or at the moment a decision falls due.
import { expect } from "chai";
import { MIN_PASS_GAP_MS, nextPassAt } from "../../lib/controller/pass-schedule.js";

const base = { nowMs: 100_000, checkIntervalMs: 1_000, unhealthyAfterMs: 20_000, waitingForPeers: false };

describe("controller: pass schedule", function () {
  it("a check interval later when no node crosses unhealthyAfter before then", function () {
    // Nodes that renewed 0 to 9 s ago cross unhealthyAfter 11 to 20 s from now.
    const lastSignsAt = [100_000, 95_000, 91_000];
    expect(nextPassAt({ ...base, lastSignsAt })).to.equal(101_000);
  });

  it("a millisecond after a node crosses unhealthyAfter, when that comes before the next check", function () {
    // Silent 19.6 s now: lost when silent for more than 20 s, at 100 401.
    expect(nextPassAt({ ...base, lastSignsAt: [95_000, 80_400] })).to.equal(100_401);
  });

  it("a node already past unhealthyAfter (judged at this pass) does not hurry the next", function () {
    expect(nextPassAt({ ...base, lastSignsAt: [79_000] })).to.equal(101_000);
  });

  it("every quarter check while a lost node waits for peers whose renewal is due", function () {
    expect(nextPassAt({ ...base, lastSignsAt: [], waitingForPeers: true })).to.equal(100_250);
    // A crossing sooner than that still comes first.
    expect(nextPassAt({ ...base, lastSignsAt: [80_100], waitingForPeers: true })).to.equal(100_101);
  });

  it("never sooner than the minimum gap", function () {
    expect(nextPassAt({ ...base, lastSignsAt: [80_000] })).to.equal(100_000 + MIN_PASS_GAP_MS);
  });
});
