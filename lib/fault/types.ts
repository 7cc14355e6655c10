// A node fault as data: what the fault layer's handles apply, what the journal records in the
// cluster under test, and all `rekindle reap` needs to revert it after the run that applied it died.
import type { NodeFaultLocator, PressureKind } from "../cluster/provider.js";

export const FAULT_KINDS = ["stop", "graceful-shutdown", "partition", "pressure"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** What is done to each node; reverted by starting it (stop, graceful-shutdown), healing, relieving. */
export type FaultAction =
  | { kind: "stop" }
  | { kind: "graceful-shutdown" }
  | { kind: "partition" }
  | { kind: "pressure"; pressure: PressureKind };

/**
 * Per node, as it happens: `applying` from just before its side effect (it may be partly applied,
 * so it is reverted too), `applied` once it returned, `reverted` once undone.
 */
export type FaultNodeState = "applying" | "applied" | "reverted";
export const FAULT_NODE_STATES: readonly FaultNodeState[] = ["applying", "applied", "reverted"];

export interface FaultNode {
  name: string;
  state: FaultNodeState;
  /** When it entered this state (ISO 8601). */
  at: string;
}

/** The process that applied the fault: `reap` leaves a fault alone while its holder still runs. */
export interface FaultHolder {
  host: string;
  pid: number;
  /**
   * A command whose fault outlives it on purpose (`rekindle node stop`): its pid is gone, yet its
   * fault is live until its deadline (`reap` leaves it unless its run is named). Absent: a run.
   */
  command?: string;
}

/** One fault's journal record (a ConfigMap in the cluster under test, see record-codec.ts). */
export interface FaultRecord {
  /** The record's name: unique per fault, DNS-1123. */
  id: string;
  runId: string;
  action: FaultAction;
  /** In the order their side effects started. */
  nodes: FaultNode[];
  /** When the record was written, before the fault's first side effect (ISO 8601). */
  appliedAt: string;
  /** By when the fault is to be reverted at the latest (ISO 8601). */
  deadline: string;
  /** How a later process reaches the nodes again to revert it. */
  locator: NodeFaultLocator;
  holder: FaultHolder;
}

/** The deadlines of faults, units in the names. */
export const FAULT_DEADLINES = {
  /** A fault with no duration of its own (a node stopped until the scenario ends) is due by then. */
  defaultMs: 3_600_000,
  /** A fault with a duration is due this long after it: the scenario lifts it itself; this is the backstop. */
  marginMs: 60_000,
  /** No deadline may lie further out than this (a forgotten fault must not outlive an afternoon). */
  maxMs: 3_600_000 + 60_000,
} as const;

/** "partition", "memory pressure": for step names and reports. */
export function describeAction(action: FaultAction): string {
  return action.kind === "pressure" ? `${action.pressure} pressure` : action.kind;
}
