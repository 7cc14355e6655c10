import { expect } from "chai";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { checkTimeline, timelineMismatch, TimelineMismatchError } from "../../lib/expect/assert.js";
import {
  expectedNodeLoss,
  earlyDetectionBounds,
  expectedNodeLossWithController,
  nominalWindows,
  OUT_OF_SERVICE_MILESTONE,
} from "../../lib/expect/model.js";
import type { Milestone } from "../../lib/observe/milestones.js";

/** The sim's container start and attach latency (the windows below were written for them). */
const SIM_LATENCIES = { podStartMs: 1000, attachMs: 500 };

const window = (name: string, windows: ReturnType<typeof nominalWindows>) => {
  const w = windows.find((x) => x.name === name);
  if (!w) throw new Error(`no window ${name}`);
  return w;
};

describe("expected-timeline model", function () {
  it("default profile, baseline: Deployment back after ≈ grace + 300 s + start (the seed's ~6 min)", function () {
    const windows = nominalWindows(
      expectedNodeLoss({ profile: TIMING_PROFILES.default, ...SIM_LATENCIES, mode: "baseline", slackMs: 0 }),
    );
    const recovered = window("deployment:recovered", windows);
    expect(recovered.minMs).to.be.within(335_000, 350_000);
    expect(recovered.maxMs).to.be.within(350_000, 375_000);
    const unknown = window("node-ready-unknown", windows);
    expect([unknown.minMs, unknown.maxMs]).to.deep.equal([40_000, 55_000]); // grace 50 s − renew 10 s … grace + period
  });

  it("default profile, baseline: the StatefulSet pod never goes and its volume never detaches", function () {
    const expected = expectedNodeLoss({
      profile: TIMING_PROFILES.default,
      ...SIM_LATENCIES,
      mode: "baseline",
    });
    for (const name of [
      "statefulset:pod-gone",
      "statefulset:replacement-ready",
      "statefulset-plain:pod-gone",
      "statefulset-plain:replacement-ready",
      "va-gone",
    ]) {
      expect(expected.find((e) => e.name === name)?.maxMs, name).to.equal(null);
    }
  });

  it("out-of-service by hand: PodGC within 20 s of the taint, detach at once, then attach and start", function () {
    const expected = expectedNodeLoss({
      profile: TIMING_PROFILES.fast,
      ...SIM_LATENCIES,
      mode: "manual-out-of-service",
      slackMs: 0,
    });
    const windows = nominalWindows(expected, { "fault-injected": 0, [OUT_OF_SERVICE_MILESTONE]: 100_000 });
    expect(window("statefulset:pod-gone", windows)).to.deep.include({ minMs: 100_000, maxMs: 121_000 });
    expect(window("statefulset:recovered", windows).maxMs).to.be.below(
      100_000 + 21_000 + 2_000 + 2_500 + 2_500 + 1,
    );
  });

  it("a kubelet that sees the attach late (attachSeenMs) widens only the start after the attach", function () {
    const at = { "fault-injected": 0, [OUT_OF_SERVICE_MILESTONE]: 100_000 };
    const options = {
      profile: TIMING_PROFILES.fast,
      ...SIM_LATENCIES,
      mode: "manual-out-of-service" as const,
      slackMs: 0,
    };
    const plain = nominalWindows(expectedNodeLoss(options), at);
    const late = nominalWindows(expectedNodeLoss({ ...options, attachSeenMs: 6_000 }), at);
    expect(window("statefulset:recovered", late).minMs).to.equal(
      window("statefulset:recovered", plain).minMs,
    );
    expect(window("statefulset:recovered", late).maxMs).to.equal(
      (window("statefulset:recovered", plain).maxMs ?? 0) + 6_000,
    );
    expect(window("va-attached-elsewhere", late)).to.deep.equal(window("va-attached-elsewhere", plain));
  });

  it("out-of-service by hand: the StatefulSet without a volume returns with no detach or attach", function () {
    const expected = expectedNodeLoss({
      profile: TIMING_PROFILES.default,
      ...SIM_LATENCIES,
      mode: "manual-out-of-service",
    });
    const plain = expected.filter((e) => e.name.startsWith("statefulset-plain:"));
    expect(plain.map((e) => [e.name, e.after])).to.deep.equal([
      ["statefulset-plain:pod-deletion-requested", "taint-added:node.kubernetes.io/unreachable"],
      ["statefulset-plain:pod-gone", OUT_OF_SERVICE_MILESTONE],
      ["statefulset-plain:replacement-created", "statefulset-plain:pod-gone"],
      ["statefulset-plain:recovered", "statefulset-plain:replacement-created"],
    ]);
    // The volume's detach and attach belong to the other StatefulSet only.
    expect(expected.filter((e) => e.name.startsWith("va-")).map((e) => e.after)).to.deep.equal([
      "statefulset:pod-gone",
      "va-gone",
    ]);
  });

  it("fast profile compresses the same chain", function () {
    const windows = nominalWindows(
      expectedNodeLoss({ profile: TIMING_PROFILES.fast, ...SIM_LATENCIES, mode: "baseline", slackMs: 0 }),
    );
    expect(window("deployment:recovered", windows).maxMs).to.be.below(30_000);
  });

  it("a window across two watches opens WATCH_SKEW_MS before its anchor, with or without slack", function () {
    for (const slackMs of [0, 3_000]) {
      const expected = expectedNodeLoss({
        profile: TIMING_PROFILES.fast,
        ...SIM_LATENCIES,
        mode: "manual-out-of-service",
        slackMs,
      });
      const vaGone = expected.find((w) => w.name === "va-gone");
      expect(vaGone?.minMs, `slack ${slackMs}`).to.equal(-1_000);
      const checks = checkTimeline(expected, [
        { name: "fault-injected", atMs: 0 },
        { name: "statefulset:pod-gone", atMs: 20_100 },
        { name: "va-gone", atMs: 20_095 },
      ]);
      expect(checks.find((c) => c.name === "va-gone")?.verdict, `slack ${slackMs}`).to.equal("ok");
      const tooEarly = checkTimeline(expected, [
        { name: "fault-injected", atMs: 0 },
        { name: "statefulset:pod-gone", atMs: 20_100 },
        { name: "va-gone", atMs: 19_000 },
      ]);
      expect(tooEarly.find((c) => c.name === "va-gone")?.verdict, `slack ${slackMs}`).to.equal("early");
    }
  });

  describe("checking a timeline", function () {
    const expected = expectedNodeLoss({
      profile: TIMING_PROFILES.fast,
      ...SIM_LATENCIES,
      mode: "baseline",
      slackMs: 0,
    });
    const base: Milestone[] = [
      { name: "fault-injected", atMs: 0 },
      { name: "node-ready-unknown", atMs: 9_000 },
      { name: "taint-added:node.kubernetes.io/unreachable", atMs: 9_100 },
      { name: "deployment:pod-deletion-requested", atMs: 14_200 },
      { name: "deployment:replacement-created", atMs: 14_300 },
      { name: "deployment:recovered", atMs: 15_400 },
      { name: "statefulset:pod-deletion-requested", atMs: 14_200 },
      { name: "statefulset-plain:pod-deletion-requested", atMs: 14_250 },
    ];

    it("passes a timeline inside every window, resolving windows against actual anchors", function () {
      const checks = checkTimeline(expected, base);
      expect(checks.every((c) => c.verdict === "ok")).to.equal(true);
      expect(timelineMismatch("baseline", checks)).to.equal(undefined);
      expect(checks.find((c) => c.name === "deployment:pod-deletion-requested")).to.deep.include({
        minMs: 14_100,
        maxMs: 15_100,
      });
    });

    it("flags late, early, missing and must-not-happen milestones", function () {
      const broken = base
        .filter((m) => m.name !== "deployment:recovered")
        .map((m) =>
          m.name === "node-ready-unknown"
            ? { ...m, atMs: 30_000 }
            : m.name === "deployment:pod-deletion-requested"
              ? { ...m, atMs: 9_500 }
              : m,
        );
      broken.push({ name: "statefulset:pod-gone", atMs: 40_000 });
      const verdicts = Object.fromEntries(checkTimeline(expected, broken).map((c) => [c.name, c.verdict]));
      expect(verdicts).to.deep.include({
        "node-ready-unknown": "late",
        "deployment:pod-deletion-requested": "early",
        "deployment:recovered": "missing",
        "statefulset:pod-gone": "unexpected",
      });
    });

    describe("a kubelet retry after a transient volume error", function () {
      const recovered = (ms: number) =>
        base.map((m) => (m.name === "deployment:recovered" ? { ...m, atMs: ms } : m));
      const window = checkTimeline(expected, base).find((c) => c.name === "deployment:recovered");
      const anchorMs =
        (window?.minMs ?? 0) - (expected.find((e) => e.name === "deployment:recovered")?.minMs ?? 0);
      const maxMs = window?.maxMs ?? 0;
      const check = (milestones: Milestone[], name = "deployment:recovered") =>
        checkTimeline(expected, milestones).find((c) => c.name === name);

      it("gives that workload's late pod milestones one backoff (15 s) more, and says so", function () {
        const late = [
          ...recovered(maxMs + 12_000),
          { name: "deployment:kubelet-retry", atMs: anchorMs + 500 },
        ];
        const result = check(late);
        expect(result).to.deep.include({ verdict: "ok", maxMs: maxMs + 15_000 });
        expect(result?.explained).to.match(/^window \+ 15s: the kubelet retried .*deployment:kubelet-retry/);
      });

      it("excuses a milestone that came the backoff's minimum (10 s) or more after the error", function () {
        const retryMs = anchorMs + 500;
        const retry = { name: "deployment:kubelet-retry", atMs: retryMs };
        expect(retryMs + 10_000, "late without the excuse").to.be.above(maxMs);
        expect(check([...recovered(retryMs + 10_000), retry])?.verdict).to.equal("ok");
        expect(check([...recovered(retryMs + 14_000), retry])?.verdict).to.equal("ok");
      });

      it("does not excuse a milestone less than the backoff's minimum after the error", function () {
        // The kubelet tries the pod again no sooner than 10 s after the failed sync: a pod running
        // 9.9 s after the error was not held back by that retry, whatever else made it late.
        const retryMs = maxMs + 5_000;
        const result = check([
          ...recovered(retryMs + 9_900),
          { name: "deployment:kubelet-retry", atMs: retryMs },
        ]);
        expect(retryMs + 9_900, "inside the widened window").to.be.below(maxMs + 15_000);
        expect(result).to.deep.include({ verdict: "late", maxMs });
        expect(result?.explained).to.equal(undefined);
      });

      it("does not excuse a milestone that came before the error", function () {
        const result = check([
          ...recovered(maxMs + 5_000),
          { name: "deployment:kubelet-retry", atMs: maxMs + 6_000 },
        ]);
        expect(result).to.deep.include({ verdict: "late", maxMs });
      });

      it("is still late past the backoff, without a retry, or with a retry over before the anchor", function () {
        const retry = { name: "deployment:kubelet-retry", atMs: anchorMs + 500 };
        expect(check([...recovered(maxMs + 15_500), retry])?.verdict).to.equal("late");
        expect(check(recovered(maxMs + 5_000))?.verdict).to.equal("late");
        // The error's retry came at most 15 s after it: one 15 s or more before the anchor was over.
        expect(
          check([...recovered(maxMs + 12_000), { ...retry, atMs: anchorMs - 15_000 }])?.verdict,
        ).to.equal("late");
      });

      it("excuses an error shortly before the anchor: its retry was still pending then", function () {
        // kind, node-loss/controller (2026-11-26): the replacement's first sync failed 0.3 s before
        // its volume's attach (the anchor); the kubelet retried it after its backoff.
        const retryMs = anchorMs - 400;
        const lateMs = Math.max(maxMs + 2_000, retryMs + 10_500);
        expect(lateMs, "late without the excuse").to.be.above(maxMs);
        const result = check([...recovered(lateMs), { name: "deployment:kubelet-retry", atMs: retryMs }]);
        expect(result).to.deep.include({ verdict: "ok", maxMs: maxMs + 15_000 });
      });

      it("excuses neither another workload nor a milestone that is not the replacement's", function () {
        const otherRetry = { name: "statefulset:kubelet-retry", atMs: anchorMs + 500 };
        expect(check([...recovered(maxMs + 12_000), otherRetry])?.verdict).to.equal("late");
        const lateUnknown = base.map((m) => (m.name === "node-ready-unknown" ? { ...m, atMs: 30_000 } : m));
        const result = check(
          [...lateUnknown, { name: "node-kubelet-retry", atMs: 9_000 }],
          "node-ready-unknown",
        );
        expect(result?.verdict).to.equal("late");
      });
    });

    it("reports a TimelineMismatchError that shows expected and actual side by side", function () {
      const late = base.map((m) => (m.name === "node-ready-unknown" ? { ...m, atMs: 30_000 } : m));
      const error = timelineMismatch("node-loss/baseline", checkTimeline(expected, late));
      expect(error).to.be.instanceOf(TimelineMismatchError);
      const message = error?.message ?? "";
      expect(message).to.include("node-ready-unknown late");
      expect(message).to.match(
        /node-ready-unknown\s+after fault-injected\s+8\.0s … 11\.0s\s+30\.0s\s+✗ late/,
      );
    });
  });
});

describe("expected-timeline model with the recovery controller", function () {
  const controller = { unhealthyAfterMs: 20_000, checkIntervalMs: 1_000, fenceMs: 3_000, cleanupMs: 2_000 };

  it("default profile: the StatefulSet with a volume is back in well under a minute", function () {
    const expected = expectedNodeLossWithController({
      profile: TIMING_PROFILES.default,
      ...SIM_LATENCIES,
      controller,
      slackMs: 0,
    });
    const recovered = window("statefulset:recovered", nominalWindows(expected));
    expect(recovered.maxMs).to.be.below(60_000);
    expect(recovered.minMs).to.be.at.least(10_000); // detection cannot beat unhealthyAfter − one renewal
  });

  it("default profile: the Deployment follows the controller, not the 300 s toleration", function () {
    const expected = expectedNodeLossWithController({
      profile: TIMING_PROFILES.default,
      ...SIM_LATENCIES,
      controller,
      slackMs: 0,
    });
    expect(window("deployment:recovered", nominalWindows(expected)).maxMs).to.be.below(40_000);
  });

  it("default profile, early power read: a stopped node is tainted by its first missed renewal", function () {
    const expected = expectedNodeLossWithController({
      profile: TIMING_PROFILES.default,
      ...SIM_LATENCIES,
      controller: { ...controller, earlyPowerRead: true },
      slackMs: 0,
    });
    const taint = window(OUT_OF_SERVICE_MILESTONE, nominalWindows(expected));
    // Missed at 10 s + max(1 s, 2 checks) = 12 s after the last renewal (0–10 s before the fault),
    // seen at a check, read by the next: 12 + 3 s, plus the fence.
    expect(taint).to.deep.include({ minMs: 2_000, maxMs: 15_000 + controller.fenceMs });
    // A driver that hears of the power loss has it read at once: no lower bound.
    const noticed = { ...controller, earlyPowerRead: true, powerLossNotices: true };
    expect(earlyDetectionBounds(10_000, noticed)).to.deep.equal({ minMs: 0, maxMs: 15_000 });
    expect(earlyDetectionBounds(10_000, { ...controller, earlyPowerRead: false })).to.equal(undefined);
    expect(
      earlyDetectionBounds(10_000, { ...controller, earlyPowerRead: true, unhealthyAfterMs: 12_000 }),
    ).to.equal(undefined);
  });

  it("fast profile: the taint manager's eviction can come first, and the window allows it", function () {
    const slow = { ...controller, unhealthyAfterMs: 60_000 };
    const expected = expectedNodeLossWithController({
      profile: TIMING_PROFILES.fast,
      ...SIM_LATENCIES,
      controller: slow,
      slackMs: 0,
    });
    const deployment = window("deployment:recovered", nominalWindows(expected));
    expect(deployment.minMs).to.be.below(20_000);
    expect(deployment.maxMs).to.be.below(40_000);
  });
});
