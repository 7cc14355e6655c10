// Which recorded transitions are of a prober pod (lib/workloads/prober.ts), by its label: a leaf,
// so the probe's milestones (probe-answers.ts) and a workload's own pods (workload-ref.ts, which
// never counts a prober) both import it without importing each other.
import { PROBER_LABEL } from "../workloads/prober.js";
import type { Transition } from "./types.js";

/** Whether `t` is a transition of the prober pod of workload `id` in `namespace`. */
export function isProberOf(id: string, namespace: string, t: Transition): boolean {
  return t.subject.kind === "Pod" && t.subject.namespace === namespace && t.pod?.labels[PROBER_LABEL] === id;
}

/** Whether `t` is a transition of any prober pod (never a pod of the workload it probes). */
export function isProberPod(t: Transition): boolean {
  return t.pod?.labels[PROBER_LABEL] !== undefined;
}
