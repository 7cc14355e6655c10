// The attach-detach controller's forced detaches, from kube-controller-manager's log: the API shows
// only the VolumeAttachment going, not why. Two reasons exist upstream (reconciler.go): the
// 6-minute maxWaitForUnmountDuration expired on an unhealthy node, or the node is out-of-service.
import { LogFollower, parseKlogLine } from "./klog.js";
import type { Milestone } from "./milestones.js";

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

/**
 * Forced detaches as milestones, "forced-detach:timeout" and "forced-detach:out-of-service", on the
 * lost node, from a kube-controller-manager log followed from construction on (none: no log).
 */
export class ForcedDetachLog {
  readonly #follower: LogFollower | undefined;
  readonly #seen: ForcedDetach[] = [];

  constructor(logPath: string | undefined) {
    this.#follower = logPath ? new LogFollower(logPath) : undefined;
  }

  /** Whether a log is followed (else there are never any). */
  get followed(): boolean {
    return this.#follower !== undefined;
  }

  milestones(faultAtMs: number, lostNode: string, untilMs = Infinity): Milestone[] {
    if (this.#follower) this.#seen.push(...forcedDetachesIn(this.#follower.readLines()));
    const out: Milestone[] = [];
    for (const d of this.#seen) {
      const name = `forced-detach:${d.reason}`;
      if (d.atMs < faultAtMs || d.atMs > untilMs || d.node !== lostNode) continue;
      if (!out.some((m) => m.name === name)) out.push({ name, atMs: d.atMs - faultAtMs, node: d.node });
    }
    return out;
  }
}
