// The JSON the fault commands print under -o json (`reap`, `down` on an existing cluster, the node
// verbs): each journal record by its id, run, action, nodes and times, never its locator (how a
// later process reaches the nodes: container names, kubeconfig paths, nothing a script needs).
import type { ReapReport } from "../fault/reaper.js";
import { describeAction, type FaultRecord } from "../fault/types.js";

export interface FaultJson {
  id: string;
  runId: string;
  /** "stop", "partition", "memory pressure"… */
  action: string;
  /** The nodes it holds faulted (not yet reverted). */
  nodes: string[];
  appliedAt: string;
  deadline: string;
  /** The command that left it on purpose (`rekindle node stop`); absent for a run's fault. */
  command?: string;
}

export function faultJson(record: FaultRecord): FaultJson {
  return {
    id: record.id,
    runId: record.runId,
    action: describeAction(record.action),
    nodes: record.nodes.filter((n) => n.state !== "reverted").map((n) => n.name),
    appliedAt: record.appliedAt,
    deadline: record.deadline,
    ...(record.holder.command !== undefined ? { command: record.holder.command } : {}),
  };
}

/** `{faults: [{…record, outcome, reason?}], unreadable: [{name, reason}]}`: what reaping found and did. */
export function reapReportJson(report: ReapReport): {
  faults: (FaultJson & { outcome: string; reason?: string })[];
  unreadable: { name: string; reason: string }[];
} {
  return {
    faults: report.entries.map((e) => ({
      ...faultJson(e.record),
      outcome: e.outcome,
      ...(e.reason !== undefined ? { reason: e.reason } : {}),
    })),
    unreadable: report.unreadable.map((u) => ({ name: u.name, reason: u.reason })),
  };
}
