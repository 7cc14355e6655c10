// Every scenario × profile × provider shape: the expected timeline must be one the recorder can
// meet. Names it can produce, anchors that resolve from the fault (or from one of the scenario's
// own marks), no window hanging off a milestone that must never happen, sane bounds. A typo in a
// milestone name, or a window whose anchor cannot come at some profile, fails here and not at
// the end of a 7-minute run.
import { expect } from "chai";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { nominalWindows, WATCH_SKEW_MS, type ExpectedMilestone } from "../../lib/expect/windows.js";
import { isRecordedMilestoneName } from "../../lib/observe/milestone-names.js";
import {
  expectationInputs,
  isOwnMilestone,
  isProducibleMilestone,
  type ExpectationInputs,
  type ScenarioDefinition,
} from "../../lib/scenario/harness.js";
import { allScenarios } from "../../suites/index.js";
import { gracefulShutdownExpected } from "../../suites/graceful-shutdown.js";

/** The provider shapes a scenario meets: the sim's (volumes attach, KCM log read) and kind's (neither). */
const SHAPES = [
  { name: "sim", latencies: { podStartMs: 1000, attachMs: 500 }, volumeAttachRequired: true, logged: true },
  {
    name: "kind",
    latencies: { podStartMs: 3000, attachMs: 500, attachSeenMs: 6000, frozenPowerOffMs: 6000 },
    volumeAttachRequired: true,
    logged: true,
  },
  {
    name: "kind-shared-storage",
    latencies: { podStartMs: 3000, attachMs: 0, frozenPowerOffMs: 6000 },
    volumeAttachRequired: false,
    logged: true,
  },
  {
    name: "existing",
    latencies: { podStartMs: 3000, attachMs: 5000 },
    volumeAttachRequired: true,
    logged: false,
  },
] as const;

function inputsFor(profile: (typeof TIMING_PROFILES)["default"], shape: (typeof SHAPES)[number]) {
  return expectationInputs({
    profile,
    eviction: profile.simKubelet,
    latencies: shape.latencies,
    volumeAttachRequired: shape.volumeAttachRequired,
    controllerManagerLogged: shape.logged,
  });
}

/** Problems with one scenario's expected timeline; empty when it can be met. */
function timelineProblems(scenario: ScenarioDefinition, inputs: ExpectationInputs): string[] {
  const expected = scenario.expected(inputs);
  const problems: string[] = [];
  const byName = new Map<string, ExpectedMilestone>();
  for (const e of expected) {
    if (byName.has(e.name)) problems.push(`${e.name}: expected twice`);
    byName.set(e.name, e);
    if (!isProducibleMilestone(scenario, e.name)) problems.push(`${e.name}: no recorder or mark produces it`);
    if (e.after !== "fault-injected" && !isProducibleMilestone(scenario, e.after))
      problems.push(`${e.name}: its anchor ${e.after} is produced by nothing`);
    // Only a window across two watches may open before its anchor, and only by their skew.
    if (e.minMs < -WATCH_SKEW_MS) problems.push(`${e.name}: lower bound ${e.minMs} below -WATCH_SKEW_MS`);
    if (e.maxMs !== null && e.maxMs < e.minMs)
      problems.push(`${e.name}: window ${e.minMs}–${e.maxMs} is empty`);
  }
  // Anchors that are not expected windows themselves happen when a step makes them: a scenario's
  // own mark, or a recorded milestone a step causes (the out-of-service taint added by hand).
  const stepTimed = Object.fromEntries(
    expected
      .map((e) => e.after)
      .filter((a) => a !== "fault-injected" && !byName.has(a) && isProducibleMilestone(scenario, a))
      .map((a) => [a, 0]),
  );
  const resolved = new Set(
    nominalWindows(expected, { "fault-injected": 0, ...stepTimed }).map((w) => w.name),
  );
  for (const e of expected) {
    if (e.maxMs === null) continue;
    const anchor = byName.get(e.after);
    if (anchor?.maxMs === null) problems.push(`${e.name}: anchored on ${e.after}, which must never happen`);
    else if (!resolved.has(e.name) && isProducibleMilestone(scenario, e.after))
      problems.push(`${e.name}: its anchor chain is a loop`);
  }
  // "again" needs a first time: the node must be expected to go NotReady or Unknown before.
  const readyAgain = byName.get("node-ready-again");
  if (readyAgain && readyAgain.maxMs !== null) {
    const down = ["node-ready-unknown", "node-not-ready"].map((n) => byName.get(n));
    if (!down.some((d) => d !== undefined && d.maxMs !== null))
      problems.push("node-ready-again: expected, but the node is never expected to leave Ready first");
  }
  return problems;
}

describe("scenario catalogue: every expected timeline can be met", function () {
  const scenarios = allScenarios();

  it("knows every family's scenarios, each id once", function () {
    const ids = scenarios.map((s) => s.id);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(ids).to.include.members(["node-loss/controller", "partition/healed-after-fence"]);
  });

  for (const profile of Object.values(TIMING_PROFILES)) {
    for (const shape of SHAPES) {
      it(`${profile.name} profile, ${shape.name}-shaped provider: names, anchors and bounds`, function () {
        const inputs = inputsFor(profile, shape);
        const problems = scenarios.flatMap((scenario) =>
          timelineProblems(scenario, inputs).map((p) => `${scenario.id}: ${p}`),
        );
        expect(problems).to.deep.equal([]);
      });
    }
  }

  it("graceful-shutdown/no-fence's other branch (the volume still reported in use) can be met too", function () {
    const graceful = scenarios.find((s) => s.id === "graceful-shutdown/no-fence");
    if (!graceful) throw new Error("graceful-shutdown/no-fence missing");
    for (const profile of Object.values(TIMING_PROFILES)) {
      for (const shape of SHAPES) {
        const fenced = { ...graceful, expected: (i: ExpectationInputs) => gracefulShutdownExpected(i, true) };
        const inputs = inputsFor(profile, shape);
        expect(timelineProblems(fenced, inputs), `${profile.name} ${shape.name}`).to.deep.equal([]);
        const names = fenced.expected(inputs).map((e) => e.name);
        expect(names).to.include.members([
          "event:FenceStarted",
          "statefulset:multi-attach",
          "statefulset:va-gone",
        ]);
        expect(names).to.not.include("event:NothingToRelease");
      }
    }
  });

  it("catches what it is for: a misspelt name, a window hanging off a 'never', an unreachable 'again'", function () {
    const base = scenarios.find((s) => s.id === "node-loss/controller");
    if (!base) throw new Error("node-loss/controller missing");
    const inputs = inputsFor(TIMING_PROFILES.fast, SHAPES[0]);
    const broken = (extra: ExpectedMilestone[]): ScenarioDefinition => ({
      ...base,
      expected: () => extra,
    });
    const window = (name: string, after: string, maxMs: number | null = 1000): ExpectedMilestone => ({
      name,
      after,
      minMs: 0,
      maxMs,
      why: "test",
    });
    expect(
      timelineProblems(broken([window("statefulset:recoverd", "fault-injected")]), inputs),
    ).to.deep.equal(["statefulset:recoverd: no recorder or mark produces it"]);
    expect(
      timelineProblems(
        broken([window("va-gone", "fault-injected", null), window("va-attached-elsewhere", "va-gone")]),
        inputs,
      ),
    ).to.deep.equal(["va-attached-elsewhere: anchored on va-gone, which must never happen"]);
    expect(timelineProblems(broken([window("node-ready-again", "fault-injected")]), inputs)).to.deep.equal([
      "node-ready-again: expected, but the node is never expected to leave Ready first",
    ]);
    expect(timelineProblems(broken([window("deployment:recovered", "leader-killed")]), inputs)).to.deep.equal(
      ["deployment:recovered: its anchor leader-killed is produced by nothing"],
    );
  });

  it("the recorder's vocabulary refuses near misses", function () {
    const ids = ["deployment", "statefulset"];
    expect(isRecordedMilestoneName("statefulset:recovered", ids)).to.equal(true);
    expect(isRecordedMilestoneName("statefulset-plain:recovered", ids)).to.equal(false);
    expect(isRecordedMilestoneName("taint-added:node.kubernetes.io/out-of-service", ids)).to.equal(true);
    expect(isRecordedMilestoneName("fence:power-management:done", ids)).to.equal(true);
    expect(isRecordedMilestoneName("fence:power-managment:done", ids)).to.equal(false);
    expect(isRecordedMilestoneName("forced-detach:never", ids)).to.equal(false);
  });

  it("own milestones match by name or pattern", function () {
    const zone = scenarios.find((s) => s.id.startsWith("zone-outage/"));
    if (!zone) throw new Error("no zone-outage scenario");
    expect(isOwnMilestone(zone, "guard-held:node-2")).to.equal(true);
    expect(isOwnMilestone(zone, "guard-held:node-x")).to.equal(false);
  });
});
