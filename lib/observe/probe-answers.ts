// "Recovered means serving", checked from inside the cluster: a probed workload's prober pod
// (lib/workloads/prober.ts) is Ready exactly while its probe answers, so its Ready transitions are
// the probe's answers. `<id>:probe-failing` is the first instant at or after the fault when it did
// not answer (the fault itself when it already did not), `<id>:answering` the first instant after
// that when it answered again.
import { relative, type Milestone } from "./milestone.js";
import { isProberOf } from "./prober-pods.js";
import type { Transition } from "./types.js";
import type { WorkloadRef } from "./workload-ref.js";

/** Answering or not after `t`; undefined when `t` does not change it. */
function answersAfter(t: Transition): boolean | undefined {
  if (t.name === "pod-ready") return true;
  if (t.name === "pod-unready" || t.name === "pod-terminal" || t.name === "pod-gone") return false;
  return undefined;
}

/** When `t` happened since the fault; not on which node (the prober's own, a control-plane node). */
function at(t: Transition, faultAtMs: number): Pick<Milestone, "atMs" | "apiAtMs"> {
  const { atMs, apiAtMs } = relative(t, faultAtMs);
  return { atMs, ...(apiAtMs !== undefined ? { apiAtMs } : {}) };
}

/** The probe's milestones (see the file comment); none unless the workload is probed and its prober was seen. */
export function probeMilestones(
  transitions: readonly Transition[],
  faultAtMs: number,
  workload: WorkloadRef,
): Milestone[] {
  if (workload.probed !== true) return [];
  const { id, namespace } = workload;
  const changes = transitions
    .filter((t) => isProberOf(id, namespace, t) && answersAfter(t) !== undefined)
    .sort((a, b) => a.atMs - b.atMs);
  // No prober seen at all: nothing to say (not "failing", which would hold the recovery back).
  if (changes.length === 0) return [];
  let answering = false;
  for (const t of changes) if (t.atMs < faultAtMs) answering = answersAfter(t) === true;
  const out: Milestone[] = answering ? [] : [{ name: `${id}:probe-failing`, atMs: 0 }];
  for (const t of changes.filter((x) => x.atMs >= faultAtMs)) {
    const now = answersAfter(t) === true;
    if (out.length === 0 && !now) out.push({ name: `${id}:probe-failing`, ...at(t, faultAtMs) });
    else if (out.length === 1 && now) {
      out.push({ name: `${id}:answering`, ...at(t, faultAtMs) });
      break;
    }
  }
  return out;
}
