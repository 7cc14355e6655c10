// The kubelet's volume warnings, as lines for the run's log. A pod whose volume setup fails once
// (say a PVC the kubelet may not read yet) waits out the kubelet's 10–15 s pod-worker backoff
// before its next try; the milestones show only that it was late, the event's message says why.
import type { Transition } from "./types.js";

/** Event reasons whose message explains a late pod start. */
export const VOLUME_WARNING_REASONS = ["FailedMount", "FailedAttachVolume", "FailedMapVolume"] as const;

/** "FailedMount pod ns/db-0: <message>" for a volume warning event; undefined for anything else. */
export function volumeWarningLine(transition: Transition): string | undefined {
  if (transition.name !== "event") return undefined;
  const detail = transition.detail ?? {};
  const reason = detail["reason"] ?? "";
  if (!(VOLUME_WARNING_REASONS as readonly string[]).includes(reason)) return undefined;
  const object = `${(detail["involvedKind"] ?? "").toLowerCase()} ${detail["involvedNamespace"] ?? ""}/${detail["involvedName"] ?? ""}`;
  return `${reason} ${object}: ${detail["message"] ?? ""}`;
}
