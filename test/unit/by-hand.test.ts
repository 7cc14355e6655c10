import { expect } from "chai";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { checkTimeline } from "../../lib/expect/assert.js";
import { DRAIN_TIMEOUT_MS, expectedReleaseByHand, PAST_FORCED_DETACH_MS } from "../../lib/expect/by-hand.js";
import { FORCED_DETACH_WAIT_MS, nominalWindows, OUT_OF_SERVICE_MILESTONE } from "../../lib/expect/model.js";
import type { Milestone } from "../../lib/observe/milestones.js";

/** The sim's container start and attach latency (the windows below were written for them). */
const SIM_LATENCIES = { podStartMs: 1000, attachMs: 500 };

const fast = TIMING_PROFILES.fast;

function nominal(name: string, windows: ReturnType<typeof nominalWindows>) {
  const w = windows.find((x) => x.name === name);
  if (!w) throw new Error(`no window ${name}`);
  return w;
}

describe("expected timeline: StatefulSet pods released by hand", function () {
  for (const profile of [TIMING_PROFILES.default, fast]) {
    for (const forceDetachDisabled of [false, true]) {
      it(`${profile.name}${forceDetachDisabled ? ", forced detach disabled" : ""}: every window's anchor resolves from the fault`, function () {
        const expected = expectedReleaseByHand({
          profile,
          ...SIM_LATENCIES,
          release: "force-delete",
          forceDetachDisabled,
          controllerManagerLogged: true,
        });
        const resolved = new Set(nominalWindows(expected).map((w) => w.name));
        for (const e of expected.filter((x) => x.maxMs !== null)) {
          expect(resolved.has(e.name), `${e.name} (after ${e.after})`).to.equal(true);
        }
      });
    }
  }

  it("the volume is detached 6 minutes after the pod went, not before: the replacement waits", function () {
    const windows = nominalWindows(
      expectedReleaseByHand({
        profile: fast,
        ...SIM_LATENCIES,
        release: "force-delete",
        forceDetachDisabled: false,
        slackMs: 0,
      }),
    );
    const gone = nominal("statefulset:pod-gone", windows);
    const detach = nominal("va-detach-started", windows);
    expect(detach.minMs - gone.minMs).to.equal(FORCED_DETACH_WAIT_MS);
    // The StatefulSet without a volume is back within seconds of the release.
    const plain = nominal("statefulset-plain:recovered", windows);
    expect(plain.maxMs).to.be.below(30_000);
    expect(nominal("statefulset:recovered", windows).minMs).to.be.above(FORCED_DETACH_WAIT_MS);
  });

  it("a detach right after the force delete (what the old sim taught) fails the timeline", function () {
    const expected = expectedReleaseByHand({
      profile: fast,
      ...SIM_LATENCIES,
      release: "force-delete",
      forceDetachDisabled: false,
    });
    const milestones: Milestone[] = [
      { name: "fault-injected", atMs: 0 },
      { name: "node-ready-unknown", atMs: 10_500 },
      { name: "released-by-hand", atMs: 10_700 },
      { name: "statefulset:pod-gone", atMs: 10_800 },
      { name: "va-detach-started", atMs: 11_000 },
    ];
    const check = checkTimeline(expected, milestones).find((c) => c.name === "va-detach-started");
    expect(check?.verdict).to.equal("early");
  });

  it("with the forced detach disabled, the detach may only follow the out-of-service taint", function () {
    const expected = expectedReleaseByHand({
      profile: fast,
      ...SIM_LATENCIES,
      release: "force-delete",
      forceDetachDisabled: true,
    });
    expect(expected.find((e) => e.name === "forced-detach:timeout")?.maxMs).to.equal(null);
    expect(expected.find((e) => e.name === "va-detach-started")?.after).to.equal(OUT_OF_SERVICE_MILESTONE);
    const taint = expected.find((e) => e.name === OUT_OF_SERVICE_MILESTONE);
    expect(taint?.after).to.equal("statefulset:pod-gone");
    expect(taint?.minMs).to.equal(FORCED_DETACH_WAIT_MS + PAST_FORCED_DETACH_MS - 3000);
  });

  it("a drain evicts everything at once, hangs on the StatefulSet pods, and only a second drain with no grace frees them", function () {
    const expected = expectedReleaseByHand({
      profile: fast,
      ...SIM_LATENCIES,
      release: "drain",
      forceDetachDisabled: false,
    });
    const after = (name: string) => expected.find((e) => e.name === name)?.after;
    // The Deployment's pods go with the drain, not after the unreachable toleration.
    expect(after("deployment:pod-deletion-requested")).to.equal("drain-started");
    expect(after("statefulset:pod-deletion-requested")).to.equal("drain-started");
    expect(after("drain-timed-out")).to.equal("drain-started");
    expect(expected.find((e) => e.name === "drain-timed-out")?.minMs).to.equal(DRAIN_TIMEOUT_MS - 3000);
    expect(after("released-by-hand")).to.equal("drain-timed-out");
    expect(after("statefulset:pod-gone")).to.equal("released-by-hand");
    const windows = nominalWindows(expected);
    // Back before the drain even gives up.
    expect(
      nominal("deployment:recovered", windows).maxMs! - nominal("drain-started", windows).maxMs!,
    ).to.be.below(DRAIN_TIMEOUT_MS);
  });

  it("without attachable storage (kind's shared hostPath) nothing waits for a detach", function () {
    const expected = expectedReleaseByHand({
      profile: fast,
      ...SIM_LATENCIES,
      release: "drain",
      forceDetachDisabled: false,
      volumeAttachRequired: false,
    });
    const names = expected.map((e) => e.name);
    expect(names).to.include("statefulset:recovered");
    expect(names).to.not.include("multi-attach");
    expect(names).to.not.include("va-detach-started");
  });

  it("names forced-detach milestones only where the controller-manager log is read", function () {
    const names = (logged: boolean) =>
      expectedReleaseByHand({
        profile: fast,
        ...SIM_LATENCIES,
        release: "force-delete",
        forceDetachDisabled: false,
        controllerManagerLogged: logged,
      }).map((e) => e.name);
    expect(names(true)).to.include("forced-detach:timeout");
    expect(names(false)).to.not.include("forced-detach:timeout");
  });
});
