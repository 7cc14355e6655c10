// One workload's budgets as a scenario file states them (its `budgets:` entries, loaded: durations
// in ms): what checkBudgets (budgets.ts) checks. Declared here, in the model's layer, so the model
// does not import the scenario-file layer above it; lib/scenario-file/types.ts imports it.

/** Absolute service-level objectives for one workload, checked beside the model's windows. */
export interface BudgetSpec {
  workload: string;
  /** "<workload>:recovered" at most this long after the fault. */
  recoveredWithinMs?: number;
  /** "<workload>:serving" at most this long after the fault (needs a Service). */
  servingWithinMs?: number;
  /** At no instant after the fault are more than this many of its wanted replicas not Ready. */
  maxUnavailable?: number;
  /** None of its pods is evicted or deleted by the node lifecycle or the kubelet. */
  neverEvicted?: boolean;
  /** Never two of its pods Ready at once on different nodes (StatefulSet split brain). */
  neverReadyOnTwoNodes?: boolean;
  /**
   * Never two copies of it writing to its volume at once, as the writer workload's log shows
   * (`<workload>:two-writers`, lib/observe/two-writers.ts). The workload (a StatefulSet with a
   * ReadWriteOnce claim) then runs the writer beside its own containers.
   */
  neverTwoWriters?: boolean;
}
