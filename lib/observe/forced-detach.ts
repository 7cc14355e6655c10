// The attach-detach controller's forced detaches, from kube-controller-manager's log: the API shows
// only the VolumeAttachment going, not why. Two reasons exist upstream (reconciler.go): the
// 6-minute maxWaitForUnmountDuration expired on an unhealthy node, or the node is out-of-service.
import { parseKlogLine } from "./klog.js";

export type ForcedDetachReason = "timeout" | "out-of-service";

export interface ForcedDetach {
  atMs: number;
  reason: ForcedDetachReason;
  node: string;
  volume: string;
}

const TIMEOUT_TEXT = "maxWaitForUnmountDuration expired, force detaching";
const OUT_OF_SERVICE_TEXT = "node has out-of-service taint, force detaching";

export function forcedDetachesIn(lines: readonly string[], now: Date = new Date()): ForcedDetach[] {
  const out: ForcedDetach[] = [];
  for (const line of lines) {
    if (!line.includes("force detaching")) continue;
    const entry = parseKlogLine(line, now);
    if (!entry) continue;
    const reason: ForcedDetachReason | undefined = entry.message.includes(TIMEOUT_TEXT)
      ? "timeout"
      : entry.message.includes(OUT_OF_SERVICE_TEXT)
        ? "out-of-service"
        : undefined;
    if (!reason) continue;
    out.push({
      atMs: entry.atMs,
      reason,
      node: entry.fields["node"] ?? "",
      volume: entry.fields["volumeName"] ?? "",
    });
  }
  return out;
}
