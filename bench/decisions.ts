// Detection-to-decision latency (issue 25 item 8), pure: from the controller's Events and the lost
// nodes' last Lease renewals. A node's decision is its first Event that starts its fence or holds
// it; its latency runs from its last renewal (the Lease renewTime the kubelet wrote) to the moment
// this bench received that Event, and is also given past the rule's threshold: unhealthyAfter; for
// a node its fence driver read off at a missed renewal, the missed-renewal time (early-power.ts);
// for one read off on a power-loss notice, the notice (the stop plus the driver's notice delay).
// The controller's log says which read it was, and when it decided (before the Event's POST).
import { EVENT_REASONS } from "../lib/controller/events.js";
import { missedRenewalAfterMs } from "../lib/controller/observations.js";
import { percentile } from "../lib/report/summary.js";

/** The Events that decide a lost node's fate, by what they decide. */
export const DECISION_EVENTS: Readonly<Record<string, DecisionKind>> = {
  [EVENT_REASONS.nodeUnhealthy]: "fence",
  [EVENT_REASONS.fenceStarted]: "fence",
  [EVENT_REASONS.guardHeld]: "hold",
  [EVENT_REASONS.correlatedSilenceHeld]: "hold",
  [EVENT_REASONS.fleetRateHeld]: "hold",
  [EVENT_REASONS.allZonesDisruptedHeld]: "hold",
  [EVENT_REASONS.fenceRateLimited]: "hold",
  [EVENT_REASONS.nothingToRelease]: "nothing-to-release",
};

export type DecisionKind = "fence" | "hold" | "nothing-to-release";

/** The message of a decision made on an early power read (detect.ts's reason, which its Events carry). */
const POWERED_OFF = /reports its power off/;

/** A controller Event as this bench received it. */
export interface ReceivedEvent {
  node: string;
  reason: string;
  message: string;
  /** When this bench received it (wall clock, ms). */
  receivedAtMs: number;
}

/** A node this bench stopped. */
export interface LostNode {
  node: string;
  /** When this bench stopped it (wall clock, ms). */
  stoppedAtMs: number;
  /**
   * When the sim recorded it stopped in its state file, where its driver's power watch hears of it:
   * a batch (a zone outage) is recorded once, after its last stop. Default stoppedAtMs.
   */
  recordedAtMs?: number;
  /** Its Lease's last renewTime (the kubelet's clock, the same machine's here), ms. */
  lastRenewalMs: number;
  /** Its renewal cadence: a quarter of its Lease's duration. */
  renewIntervalMs: number;
}

export interface Decision {
  node: string;
  reason: string;
  kind: DecisionKind;
  /** Lost by an early power read ("reports its power off"), not by unhealthyAfter. */
  poweredOff: boolean;
  rule: DecisionRule;
  /** From the last renewal to the decision's Event. */
  fromRenewalMs: number;
  /**
   * The rule's threshold, from the last renewal: unhealthyAfter; the missed-renewal time for a
   * power read at a missed renewal; the notice (stop + the driver's notice delay) for one on a notice.
   */
  thresholdMs: number;
  /** fromRenewalMs less thresholdMs. */
  afterThresholdMs: number;
  /** From this bench's stop to the decision's Event. */
  fromStopMs: number;
  /** From the last renewal to the controller's log line of its early power read (off), if any. */
  readOffFromRenewalMs?: number;
  /** From the last renewal to the controller's log line of its decision (before the Event's POST), if logged. */
  decidedInProcessFromRenewalMs?: number;
  /** That log line past the rule's threshold: the decision itself, without the Event's write. */
  decidedInProcessAfterThresholdMs?: number;
  /** From that log line to this bench's receipt of the decision's Event: its write and delivery. */
  eventAfterDecidedMs?: number;
}

/**
 * Which rule let the controller decide: silence for unhealthyAfter, a power read off at a missed
 * renewal, or a power read off on the driver's power-loss notice.
 */
export type DecisionRule = "unhealthy-after" | "missed-renewal-read" | "power-loss-notice";

/** A controller log line and when it was written (wall clock, ms). */
export interface LogLine {
  atMs: number;
  message: string;
}

/** What a controller log line marks for a node: its early power read off, or its decision. */
export interface LogMark {
  node: string;
  mark: "read-off" | "notice-read-off" | "decided";
  atMs: number;
}

/** The log lines that mark a read off or a decision (controller.ts and early-power.ts's wording). */
const LOG_MARKS: readonly [RegExp, LogMark["mark"]][] = [
  [/^(\S+) missed \d+ Lease renewal\(s\) and \S+ reports its power off/, "read-off"],
  [/^(\S+) had a power-loss notice \(.*\) and \S+ reports its power off/, "notice-read-off"],
  [/^(\S+) holds .*: fencing it releases them$/, "decided"],
  [/^holds (\S+): /, "decided"],
  [/^(\S+) lost \(.*\), but it holds no running pods/, "decided"],
];

export function logMarks(lines: readonly LogLine[]): LogMark[] {
  return lines.flatMap(({ atMs, message }) => {
    for (const [pattern, mark] of LOG_MARKS) {
      const node = pattern.exec(message)?.[1];
      if (node !== undefined) return [{ node, mark, atMs }];
    }
    return [];
  });
}

export interface DecisionRules {
  unhealthyAfterMs: number;
  checkIntervalMs: number;
  /** From a power loss to its notice (the sim driver's SIM_POWER_LOSS_NOTICE_MS). Default 0. */
  powerLossNoticeMs?: number;
}

/** Each lost node's first decision received after it was stopped; nodes with none are left out. */
export function attributeDecisions(
  lost: readonly LostNode[],
  events: readonly ReceivedEvent[],
  rules: DecisionRules,
  marks: readonly LogMark[] = [],
): Decision[] {
  const decisions: Decision[] = [];
  for (const node of lost) {
    const firstMark = (mark: LogMark["mark"]) =>
      marks.find((m) => m.node === node.node && m.mark === mark && m.atMs >= node.stoppedAtMs)?.atMs;
    // The first read off, at a missed renewal or on a notice, is the one the decision followed.
    const missedReadOffAt = firstMark("read-off");
    const noticeReadOffAt = firstMark("notice-read-off");
    const readByNotice =
      noticeReadOffAt !== undefined && (missedReadOffAt === undefined || noticeReadOffAt < missedReadOffAt);
    const readOffAt = readByNotice ? noticeReadOffAt : missedReadOffAt;
    const decidedAt = firstMark("decided");
    const first = events
      .filter(
        (e) => e.node === node.node && e.receivedAtMs >= node.stoppedAtMs && e.reason in DECISION_EVENTS,
      )
      .sort((a, b) => a.receivedAtMs - b.receivedAtMs)[0];
    if (!first) continue;
    const poweredOff = POWERED_OFF.test(first.message);
    const rule: DecisionRule = !poweredOff
      ? "unhealthy-after"
      : readByNotice
        ? "power-loss-notice"
        : "missed-renewal-read";
    const thresholdMs = {
      "unhealthy-after": rules.unhealthyAfterMs,
      "missed-renewal-read": missedRenewalAfterMs(node.renewIntervalMs, rules.checkIntervalMs),
      "power-loss-notice":
        (node.recordedAtMs ?? node.stoppedAtMs) + (rules.powerLossNoticeMs ?? 0) - node.lastRenewalMs,
    }[rule];
    const fromRenewalMs = first.receivedAtMs - node.lastRenewalMs;
    decisions.push({
      node: node.node,
      reason: first.reason,
      kind: DECISION_EVENTS[first.reason] ?? "hold",
      poweredOff,
      rule,
      fromRenewalMs,
      thresholdMs,
      afterThresholdMs: fromRenewalMs - thresholdMs,
      fromStopMs: first.receivedAtMs - node.stoppedAtMs,
      ...(readOffAt === undefined ? {} : { readOffFromRenewalMs: readOffAt - node.lastRenewalMs }),
      ...(decidedAt === undefined
        ? {}
        : {
            decidedInProcessFromRenewalMs: decidedAt - node.lastRenewalMs,
            decidedInProcessAfterThresholdMs: decidedAt - node.lastRenewalMs - thresholdMs,
            eventAfterDecidedMs: first.receivedAtMs - decidedAt,
          }),
    });
  }
  return decisions;
}

export interface LatencyStats {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

/** Nearest-rank p50, p99 and max (ms, rounded); undefined for no values. */
export function latencyStats(values: readonly number[]): LatencyStats | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: Math.round(percentile(sorted, 50)),
    p99: Math.round(percentile(sorted, 99)),
    max: Math.round(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

export interface DecisionSummary {
  lost: number;
  decided: number;
  /** Lost nodes with no decision before the wait ended. */
  undecided: string[];
  byReason: Record<string, number>;
  byRule: Partial<Record<DecisionRule, number>>;
  poweredOff: number;
  fromRenewalMs: LatencyStats | undefined;
  afterThresholdMs: LatencyStats | undefined;
  fromStopMs: LatencyStats | undefined;
  /** The controller's own log: early power read answered off, and decision made (before its Event). */
  readOffFromRenewalMs: LatencyStats | undefined;
  decidedInProcessFromRenewalMs: LatencyStats | undefined;
  decidedInProcessAfterThresholdMs: LatencyStats | undefined;
  eventAfterDecidedMs: LatencyStats | undefined;
}

export function summarizeDecisions(
  lost: readonly LostNode[],
  decisions: readonly Decision[],
): DecisionSummary {
  const decided = new Set(decisions.map((d) => d.node));
  const byReason: Record<string, number> = {};
  const byRule: Partial<Record<DecisionRule, number>> = {};
  for (const d of decisions) {
    byReason[d.reason] = (byReason[d.reason] ?? 0) + 1;
    byRule[d.rule] = (byRule[d.rule] ?? 0) + 1;
  }
  return {
    lost: lost.length,
    decided: decisions.length,
    undecided: lost.filter((l) => !decided.has(l.node)).map((l) => l.node),
    byReason,
    byRule,
    poweredOff: decisions.filter((d) => d.poweredOff).length,
    fromRenewalMs: latencyStats(decisions.map((d) => d.fromRenewalMs)),
    afterThresholdMs: latencyStats(decisions.map((d) => d.afterThresholdMs)),
    fromStopMs: latencyStats(decisions.map((d) => d.fromStopMs)),
    readOffFromRenewalMs: latencyStats(decisions.flatMap((d) => d.readOffFromRenewalMs ?? [])),
    decidedInProcessFromRenewalMs: latencyStats(
      decisions.flatMap((d) => d.decidedInProcessFromRenewalMs ?? []),
    ),
    decidedInProcessAfterThresholdMs: latencyStats(
      decisions.flatMap((d) => d.decidedInProcessAfterThresholdMs ?? []),
    ),
    eventAfterDecidedMs: latencyStats(decisions.flatMap((d) => d.eventAfterDecidedMs ?? [])),
  };
}
