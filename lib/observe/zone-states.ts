// The node lifecycle controller's zone states, from kube-controller-manager's log: v1.34 records
// them nowhere in the API (no Event, only metrics), but logs each change at level 0
// (node_lifecycle_controller.go handleDisruption):
//   "Controller detected that zone is now in new state" zone="<region>:\x00:<zone>" newState="PartialDisruption"
//   "Controller detected that all Nodes are not-Ready. Entering master disruption mode"
//   "Controller detected that some Nodes are Ready. Exiting master disruption mode"
// Entering master disruption mode sets every zone FullDisruption without a line per zone.
import { LogFollower, parseKlogLine } from "./klog.js";
import type { Milestone } from "./milestones.js";

export type ZoneStateName = "Initial" | "Normal" | "PartialDisruption" | "FullDisruption";

export type ZoneStateChange =
  | { atMs: number; kind: "zone"; zone: string; state: ZoneStateName }
  | { atMs: number; kind: "disruption-mode"; mode: "entered" | "exited" };

const ZONE_TEXT = "Controller detected that zone is now in new state";
const ENTERED_TEXT = "Entering master disruption mode";
const EXITED_TEXT = "Exiting master disruption mode";
const STATES: readonly string[] = ["Initial", "Normal", "PartialDisruption", "FullDisruption"];

/** The zone label's value from the controller's zone key ("<region>:\x00:<zone>", klog writes the NUL as \x00). */
export function zoneOfKey(key: string): string {
  for (const separator of [":\\x00:", ":\u0000:"]) {
    const at = key.lastIndexOf(separator);
    if (at >= 0) return key.slice(at + separator.length);
  }
  return key;
}

export function zoneStateChangesIn(lines: readonly string[], now: Date = new Date()): ZoneStateChange[] {
  const out: ZoneStateChange[] = [];
  for (const line of lines) {
    if (!line.includes("Controller detected that")) continue;
    const entry = parseKlogLine(line, now);
    if (!entry) continue;
    if (entry.message.includes(ZONE_TEXT)) {
      const state = entry.fields["newState"] ?? "";
      if (STATES.includes(state))
        out.push({
          atMs: entry.atMs,
          kind: "zone",
          zone: zoneOfKey(entry.fields["zone"] ?? ""),
          state: state as ZoneStateName,
        });
    } else if (entry.message.includes(ENTERED_TEXT)) {
      out.push({ atMs: entry.atMs, kind: "disruption-mode", mode: "entered" });
    } else if (entry.message.includes(EXITED_TEXT)) {
      out.push({ atMs: entry.atMs, kind: "disruption-mode", mode: "exited" });
    }
  }
  return out;
}

/** The milestone of a change: "zone-state:<zone>:<state>" or "disruption-mode:entered|exited". */
export function zoneStateMilestoneName(change: ZoneStateChange): string {
  return change.kind === "zone"
    ? `zone-state:${change.zone}:${change.state}`
    : `disruption-mode:${change.mode}`;
}

/**
 * Zone-state changes as milestones (each name once, the first after the fault), from a
 * kube-controller-manager log followed from construction on (none: no log, no milestones).
 */
export class ZoneStateLog {
  readonly #follower: LogFollower | undefined;
  readonly #seen: ZoneStateChange[] = [];

  constructor(logPath: string | undefined) {
    this.#follower = logPath ? new LogFollower(logPath) : undefined;
  }

  /** Every change read so far (epoch ms). */
  changes(): readonly ZoneStateChange[] {
    if (this.#follower) this.#seen.push(...zoneStateChangesIn(this.#follower.readLines()));
    return this.#seen;
  }

  milestones(faultAtMs: number, untilMs = Infinity): Milestone[] {
    const out: Milestone[] = [];
    for (const change of this.changes()) {
      if (change.atMs < faultAtMs || change.atMs > untilMs) continue;
      const name = zoneStateMilestoneName(change);
      if (!out.some((m) => m.name === name))
        out.push({
          name,
          atMs: change.atMs - faultAtMs,
          ...(change.kind === "zone" && change.zone !== "" ? { zone: change.zone } : {}),
        });
    }
    return out;
  }
}
