// A workload as the milestones see it: which pods are its own (by the built-in fixtures' `app`
// label, or by a label selector), the Service that fronts it, and how many endpoints it should serve.
import { isProberPod } from "./prober-pods.js";
import type { Transition } from "./types.js";

interface WorkloadIdentity {
  /** Milestone prefix, e.g. "deployment" ("<id>:recovered"). */
  id: string;
  namespace: string;
  /** The Service that fronts it: `<id>:endpoints-lost` and `<id>:serving` follow its EndpointSlices. */
  service?: string;
  /** Ready endpoints the Service should hold; default: the workload's pods Ready just before the fault. */
  wantedReady?: number;
  /** A prober pod checks it from inside the cluster: `<id>:probe-failing` and `<id>:answering` follow its Ready. */
  probed?: boolean;
  /**
   * Its pods can run only on the node that holds their volume (node-local storage): a replacement
   * on a faulted node, once that node is back, counts towards `<id>:recovered`. Default false: a
   * replacement is a new pod on another node.
   */
  pinnedToNode?: boolean;
}

/**
 * A workload whose milestones are derived. Its pods are those whose labels include every
 * `matchLabels` entry when it is given (an empty one selects every pod of the namespace, as an
 * empty selector does), else those whose `app` label is `app` (the built-in fixtures).
 */
export type WorkloadRef = WorkloadIdentity &
  (
    | { app: string; matchLabels?: Readonly<Record<string, string>> }
    | { app?: string; matchLabels: Readonly<Record<string, string>> }
  );

/** Whether `t` is a transition of one of the workload's pods (never of a prober pod, whatever its selector). */
export function isPodOf(workload: WorkloadRef, t: Transition): boolean {
  if (t.subject.kind !== "Pod" || t.subject.namespace !== workload.namespace || isProberPod(t)) return false;
  const { matchLabels } = workload;
  if (matchLabels !== undefined) {
    const labels = t.pod?.labels ?? {};
    return Object.entries(matchLabels).every(([key, value]) => labels[key] === value);
  }
  return t.detail?.["app"] === workload.app;
}

/** A pod's key in a timeline: its uid, else (synthetic or very old records) its name. */
export function podKey(t: Transition): string {
  return t.subject.uid ?? t.subject.name;
}
