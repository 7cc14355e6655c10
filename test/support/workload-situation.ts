// The workload model's situation the model tests start from: a stopped node, one lost pod, sim latencies.
import type { TimingProfile } from "../../lib/cluster/profiles.js";
import { knobs } from "../../lib/expect/model.js";
import type { WorkloadSituation } from "../../lib/expect/workload-model.js";

/** The sim's pod start and attach latencies (ms). */
const SIM_LATENCIES = { podStartMs: 1000, attachMs: 500 };

/** A stop of one pod's node under `profile`, no slack; `more` overrides any part. */
export function situation(profile: TimingProfile, more: Partial<WorkloadSituation> = {}): WorkloadSituation {
  return {
    fault: "stop",
    knobs: knobs({ profile, ...SIM_LATENCIES, slackMs: 0 }),
    eviction: profile.simKubelet,
    lostPods: 1,
    ...more,
  };
}
