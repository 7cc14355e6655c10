// The workload model agrees with today's node-loss model (lib/expect/model.ts, keyed by the
// fixtures' names) when given the fixtures' own manifests: same windows for every milestone today's
// model states, the volume's now keyed by the workload.
import { expect } from "chai";
import { TIMING_PROFILES, type TimingProfile } from "../../lib/cluster/profiles.js";
import {
  expectedNodeLoss,
  expectedNodeLossWithController,
  knobs,
  type ControllerTimingSettings,
  type ExpectedMilestone,
} from "../../lib/expect/model.js";
import { workloadFacts } from "../../lib/expect/workload-facts.js";
import { expectedScenarioWindows, type ScenarioSituation } from "../../lib/expect/workload-model.js";
import { fixtureObjects } from "../support/workload-fixtures.js";

const SIM_LATENCIES = { podStartMs: 1000, attachMs: 500 };
const CONTROLLER: ControllerTimingSettings = {
  unhealthyAfterMs: 6_000,
  checkIntervalMs: 500,
  fenceMs: 1_000,
  cleanupMs: 3_000,
};
const FIXTURES = [
  { id: "deployment", file: "deployment.yaml" },
  { id: "statefulset", file: "statefulset-pvc.yaml" },
  { id: "statefulset-plain", file: "statefulset.yaml" },
];
const STATEFUL = ["statefulset", "statefulset-plain"];
type Mode = "baseline" | "manual-out-of-service" | "controller";

/** Today's global volume milestones, keyed by the one StatefulSet with a volume. */
function keyed(name: string): string {
  return name === "va-gone" || name === "va-attached-elsewhere" ? `statefulset:${name}` : name;
}

function today(profile: TimingProfile, mode: Mode, volumeAttachRequired: boolean): ExpectedMilestone[] {
  const options = { profile, ...SIM_LATENCIES, volumeAttachRequired };
  const windows =
    mode === "controller"
      ? expectedNodeLossWithController({ ...options, controller: CONTROLLER })
      : expectedNodeLoss({ ...options, mode });
  return windows.map((w) => ({ ...w, name: keyed(w.name), after: keyed(w.after) }));
}

function derived(profile: TimingProfile, mode: Mode, volumeAttachRequired: boolean): ExpectedMilestone[] {
  const k = knobs({ profile, ...SIM_LATENCIES, volumeAttachRequired });
  // Today's manual scenario taints once the toleration has evicted the pods: past its latest.
  const taintAtMs = k.graceMs + k.periodMs + k.evictionGapMs + k.toleranceMs + 2_000;
  const situation: ScenarioSituation = {
    fault: "stop",
    knobs: k,
    eviction: profile.simKubelet,
    ...(mode === "controller" ? { controller: CONTROLLER } : {}),
    ...(mode === "manual-out-of-service"
      ? { operator: { action: "out-of-service", afterMs: taintAtMs } }
      : {}),
  };
  const workloads = FIXTURES.map(({ id, file }) => ({
    facts: workloadFacts(id, fixtureObjects(file), {
      defaultNotReadyTolerationMs: profile.defaultNotReadyTolerationSeconds * 1000,
      defaultUnreachableTolerationMs: profile.defaultUnreachableTolerationSeconds * 1000,
      volumeAttachRequired,
    }),
    lostPods: 1,
  }));
  return expectedScenarioWindows(workloads, situation);
}

const bounds = (w: ExpectedMilestone | undefined) =>
  w && { name: w.name, after: w.after, minMs: w.minMs, maxMs: w.maxMs };

describe("workload model agrees with today's node-loss model on the fixtures", function () {
  for (const profile of [TIMING_PROFILES.default, TIMING_PROFILES.fast]) {
    for (const mode of ["baseline", "manual-out-of-service", "controller"] as const) {
      for (const volumeAttachRequired of [true, false]) {
        const label = `${profile.name}, ${mode}${volumeAttachRequired ? "" : ", no attach step"}`;
        it(`${label}: every workload window of today's model, the same`, function () {
          const mine = derived(profile, mode, volumeAttachRequired);
          const theirs = today(profile, mode, volumeAttachRequired).filter((w) =>
            FIXTURES.some(({ id }) => w.name.startsWith(`${id}:`)),
          );
          expect(theirs.length).to.be.greaterThan(3);
          for (const w of theirs) {
            expect(bounds(mine.find((m) => m.name === w.name)), w.name).to.deep.equal(bounds(w));
          }
        });

        it(`${label}: StatefulSet pod-gone, recovered and volume windows, no more than today's`, function () {
          const mine = derived(profile, mode, volumeAttachRequired);
          const theirs = today(profile, mode, volumeAttachRequired);
          for (const id of STATEFUL) {
            for (const suffix of ["pod-gone", "recovered", "va-gone", "va-attached-elsewhere"]) {
              const name = `${id}:${suffix}`;
              const ours = mine.find((m) => m.name === name);
              const known = theirs.find((m) => m.name === name);
              if (known !== undefined || ours === undefined) {
                expect(bounds(ours), name).to.deep.equal(bounds(known));
                continue;
              }
              // Only "never recovered" is added, where today says the replacement is never Ready.
              expect(suffix, name).to.equal("recovered");
              expect(ours.maxMs, name).to.equal(null);
              expect(theirs.find((m) => m.name === `${id}:replacement-ready`)?.maxMs, name).to.equal(null);
            }
          }
        });
      }
    }
  }
});
