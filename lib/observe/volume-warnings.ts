// The kubelet's volume warnings: lines for the run's log, and the transient ones that explain a
// late pod start. A pod whose volume setup fails once (say a PVC the kubelet may not read yet)
// waits out the kubelet's pod-worker backoff before its next try; the milestones show only that
// it was late, the event's message says why.
import type { Transition } from "./types.js";

/** Event reasons whose message explains a late pod start. */
export const VOLUME_WARNING_REASONS = ["FailedMount", "FailedAttachVolume", "FailedMapVolume"] as const;

/**
 * The kubelet's pod-worker backoff after a failed sync: `backOffPeriod` 10 s with jitter factor
 * 0.5, so the retry comes 10–15 s after the failure (kubernetes/kubernetes v1.34: pkg/kubelet/kubelet.go
 * `backOffPeriod`, pkg/kubelet/pod_workers.go `completeWork`). It is the backoff of the errors below:
 * the volume manager hands the populator's error for the pod straight to the sync
 * (pkg/kubelet/volumemanager/volume_manager.go `verifyVolumesMountedFunc`), the sync records
 * FailedMount "Unable to attach or mount volumes" and fails. The volume operations' own backoff
 * (500 ms at first: pkg/util/goroutinemap/exponentialbackoff, used by
 * pkg/volume/util/nestedpendingoperations) is for a failed mount or attach operation, which these are not.
 */
export const KUBELET_POD_RETRY_MIN_MS = 10_000;
export const KUBELET_POD_RETRY_MAX_MS = 15_000;

/**
 * Volume errors that are known races of a real cluster, not faults of the scenario: the kubelet
 * retries after its backoff and the pod starts. Each is matched on the kubelet's message.
 */
const TRANSIENT_VOLUME_ERRORS: readonly { pattern: RegExp; cause: string }[] = [
  {
    // The kube-apiserver's Node authorizer lets a kubelet read a PVC only once its graph links
    // the pod to the node; the kubelet can see the bound pod before the graph does. Measured on
    // kind here: 1 in ~70 StatefulSet pod moves (kubernetes/kubernetes#113429, #104108).
    pattern: /no relationship found between node '[^']*' and this object/,
    cause:
      "the Node authorizer had not yet linked the pod to its node (upstream race, kubernetes/kubernetes#113429)",
  },
];

function isVolumeWarning(transition: Transition): boolean {
  return (
    transition.name === "event" &&
    (VOLUME_WARNING_REASONS as readonly string[]).includes(transition.detail?.["reason"] ?? "")
  );
}

/** Why a volume warning is transient (the kubelet retries on its own), or undefined if it is not known to be. */
export function transientVolumeErrorCause(transition: Transition): string | undefined {
  if (!isVolumeWarning(transition)) return undefined;
  const message = transition.detail?.["message"] ?? "";
  return TRANSIENT_VOLUME_ERRORS.find((known) => known.pattern.test(message))?.cause;
}

/** "FailedMount pod ns/db-0: <message>" for a volume warning event; undefined for anything else. */
export function volumeWarningLine(transition: Transition): string | undefined {
  if (!isVolumeWarning(transition)) return undefined;
  const detail = transition.detail ?? {};
  const reason = detail["reason"] ?? "";
  const object = `${(detail["involvedKind"] ?? "").toLowerCase()} ${detail["involvedNamespace"] ?? ""}/${detail["involvedName"] ?? ""}`;
  const line = `${reason} ${object}: ${detail["message"] ?? ""}`;
  const cause = transientVolumeErrorCause(transition);
  return cause === undefined
    ? line
    : `${line} [transient: ${cause}; the kubelet retries after its ${KUBELET_POD_RETRY_MIN_MS / 1000}–${KUBELET_POD_RETRY_MAX_MS / 1000} s pod-worker backoff]`;
}
