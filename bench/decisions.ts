// Detection-to-decision latency (issue 25 item 8), pure: from the controller's Events and the lost
// nodes' last Lease renewals. A node's decision is its first Event that starts its fence or holds
// it; its latency runs from its last renewal (the Lease renewTime the kubelet wrote) to the moment
// this bench received that Event, and is also given past the rule's threshold: unhealthyAfter, or
// for a node its fence driver read off the missed-renewal time (early-power.ts).
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
  /** From the last renewal to the decision's Event. */
  fromRenewalMs: number;
  /** The rule's threshold: unhealthyAfter, or the missed-renewal time for an early power read. */
  thresholdMs: number;
  /** fromRenewalMs less thresholdMs. */
  afterThresholdMs: number;
  /** From this bench's stop to the decision's Event. */
  fromStopMs: number;
  /** From the last renewal to the controller's log line of its early power read (off), if any. */
  readOffFromRenewalMs?: number;
  /** From the last renewal to the controller's log line of its decision (before the Event's POST), if logged. */
  decidedInProcessFromRenewalMs?: number;
}

/** A controller log line and when it was written (wall clock, ms). */
export interface LogLine {
  atMs: number;
  message: string;
}

/** What a controller log line marks for a node: its early power read off, or its decision. */
export interface LogMark {
  node: string;
  mark: "read-off" | "decided";
  atMs: number;
}

/** The log lines that mark a read off or a decision (controller.ts and early-power.ts's wording). */
const LOG_MARKS: readonly [RegExp, LogMark["mark"]][] = [
  [/^(\S+) missed \d+ Lease renewal\(s\) and \S+ reports its power off/, "read-off"],
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
    const readOffAt = firstMark("read-off");
    const decidedAt = firstMark("decided");
    const first = events
      .filter(
        (e) => e.node === node.node && e.receivedAtMs >= node.stoppedAtMs && e.reason in DECISION_EVENTS,
      )
      .sort((a, b) => a.receivedAtMs - b.receivedAtMs)[0];
    if (!first) continue;
    const poweredOff = POWERED_OFF.test(first.message);
    const thresholdMs = poweredOff
      ? missedRenewalAfterMs(node.renewIntervalMs, rules.checkIntervalMs)
      : rules.unhealthyAfterMs;
    const fromRenewalMs = first.receivedAtMs - node.lastRenewalMs;
    decisions.push({
      node: node.node,
      reason: first.reason,
      kind: DECISION_EVENTS[first.reason] ?? "hold",
      poweredOff,
      fromRenewalMs,
      thresholdMs,
      afterThresholdMs: fromRenewalMs - thresholdMs,
      fromStopMs: first.receivedAtMs - node.stoppedAtMs,
      ...(readOffAt === undefined ? {} : { readOffFromRenewalMs: readOffAt - node.lastRenewalMs }),
      ...(decidedAt === undefined ? {} : { decidedInProcessFromRenewalMs: decidedAt - node.lastRenewalMs }),
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
  poweredOff: number;
  fromRenewalMs: LatencyStats | undefined;
  afterThresholdMs: LatencyStats | undefined;
  fromStopMs: LatencyStats | undefined;
  /** The controller's own log: early power read answered off, and decision made (before its Event). */
  readOffFromRenewalMs: LatencyStats | undefined;
  decidedInProcessFromRenewalMs: LatencyStats | undefined;
}

export function summarizeDecisions(
  lost: readonly LostNode[],
  decisions: readonly Decision[],
): DecisionSummary {
  const decided = new Set(decisions.map((d) => d.node));
  const byReason: Record<string, number> = {};
  for (const d of decisions) byReason[d.reason] = (byReason[d.reason] ?? 0) + 1;
  return {
    lost: lost.length,
    decided: decisions.length,
    undecided: lost.filter((l) => !decided.has(l.node)).map((l) => l.node),
    byReason,
    poweredOff: decisions.filter((d) => d.poweredOff).length,
    fromRenewalMs: latencyStats(decisions.map((d) => d.fromRenewalMs)),
    afterThresholdMs: latencyStats(decisions.map((d) => d.afterThresholdMs)),
    fromStopMs: latencyStats(decisions.map((d) => d.fromStopMs)),
    readOffFromRenewalMs: latencyStats(decisions.flatMap((d) => d.readOffFromRenewalMs ?? [])),
    decidedInProcessFromRenewalMs: latencyStats(
      decisions.flatMap((d) => d.decidedInProcessFromRenewalMs ?? []),
    ),
  };
}
