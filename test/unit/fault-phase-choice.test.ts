// Choosing the fault's phase in a periodic loop (lib/fault/phase-choice.ts): the wait until the
// chosen time after a pass, from a pass seen at any earlier time.
import { expect } from "chai";
import { describePhaseChoice, phaseWaitMs } from "../../lib/fault/phase-choice.js";

describe("fault phase choice", function () {
  const period = 20_000;
  it("waits until the chosen time after the pass, a period later once it has gone by", function () {
    // Passed at 100 s, fault 14 s after a pass: 114 s, 134 s, …
    expect(phaseWaitMs(100_000, period, 14_000, 100_000)).to.equal(14_000);
    expect(phaseWaitMs(100_000, period, 14_000, 110_000)).to.equal(4_000);
    expect(phaseWaitMs(100_000, period, 14_000, 114_000)).to.equal(0);
    expect(phaseWaitMs(100_000, period, 14_000, 114_001)).to.equal(19_999);
    // A pass observed long ago: the same phase many periods on.
    expect(phaseWaitMs(100_000, period, 14_000, 100_000 + 7 * period + 15_000)).to.equal(19_000);
  });

  it("never waits a whole period or more, whatever the clock says", function () {
    for (let now = 0; now < 3 * period; now += 997) {
      const wait = phaseWaitMs(50_000, period, 14_000, now);
      expect(wait).to.be.at.least(0).and.below(period);
      expect((now + wait - 50_000 - 14_000) % period).to.equal(0);
    }
  });

  it("says what it chose", function () {
    expect(describePhaseChoice({ loop: "PodGC", faultAfterPassMs: 14_000 })).to.equal(
      "the fault comes 14 s after a PodGC pass (every 20 s)",
    );
  });
});
