// What the node-loss milestones are derived from (the fault, the lost node, the workloads) and the
// derivation each group of milestones works on: a leaf, so milestones.ts and the per-workload
// groups it calls (workload-volumes.ts) both import it without importing each other.
import type { Milestone } from "./milestone.js";
import type { TransitionIndex } from "./transition-log.js";
import type { Transition, TransitionName, WatchedKind } from "./types.js";
import type { WorkloadRef } from "./workload-ref.js";

export interface NodeLossContext {
  faultAtMs: number;
  lostNode: string;
  /** Every node the fault hit (the lost node first); default just the lost node. */
  faultNodes?: readonly string[];
  workloads: WorkloadRef[];
}

/** What each group of milestones is derived from: the transitions, the lost node, and where to add. */
export interface Derivation {
  /** The transitions, indexed. */
  index: TransitionIndex;
  /** The transitions of this name from the fault on, in time order. */
  after: (name: TransitionName) => readonly Transition[];
  /** The transitions of objects of this kind from the fault on, in time order. */
  afterOfKind: (kind: WatchedKind) => readonly Transition[];
  context: NodeLossContext;
  onLost: (t: Transition) => boolean;
  /** On any node the fault hit: whose pods a workload lost, where their volumes were attached. */
  onFaulted: (t: Transition) => boolean;
  /** Adds a milestone at `t`, unless there is none or the name is already taken (the first wins). */
  add: (name: string, t: Transition | undefined) => void;
  /** Adds a milestone made elsewhere, unless its name is already taken. */
  addMilestone: (milestone: Milestone | undefined) => void;
}
