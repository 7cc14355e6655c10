// Why a pod is not Ready, in words, for errors that wait on pods (the agent's DaemonSet, the
// in-cluster controller's Deployment).
import type { k8s } from "./client.js";

/** A pod not Ready, in words: its node and why (the waiting reason and message, or its phase). */
export function podTrouble(pod: k8s.V1Pod): string {
  const waiting = pod.status?.containerStatuses?.find((s) => s.state?.waiting)?.state?.waiting;
  const terminated = pod.status?.containerStatuses?.find((s) => s.lastState?.terminated)?.lastState
    ?.terminated;
  const why = waiting
    ? `${waiting.reason ?? "waiting"}${waiting.message ? `: ${waiting.message}` : ""}`
    : terminated
      ? `exited ${terminated.exitCode}${terminated.reason ? ` (${terminated.reason})` : ""}`
      : `phase ${pod.status?.phase ?? "unknown"}`;
  return `${pod.spec?.nodeName ?? "(unscheduled)"}: ${why}`;
}

/** The kubelet's waiting reasons for an image it cannot have: retrying will not help. */
const IMAGE_FAILURES = new Set(["ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"]);

/** The pod's trouble when its image cannot be had on its node, else undefined. */
export function imageTrouble(pod: k8s.V1Pod): string | undefined {
  const failing = pod.status?.containerStatuses?.some((s) =>
    IMAGE_FAILURES.has(s.state?.waiting?.reason ?? ""),
  );
  return failing === true ? podTrouble(pod) : undefined;
}
