// summary.json's `error`: how the harness or its infrastructure failed (not a scenario's verdict).
// A leaf, so the summary's shape (summary-types.ts) and the records of sharded and parallel runs
// (shard.ts, parallel-join.ts) all name it.

/** Where in a run the harness broke. */
export type RunPhase = "cluster-boot" | "suites" | "teardown";

/** The harness or its infrastructure failed (not a scenario's verdict): what, where, and the code. */
export interface RunError {
  /** RekindleError code of the cause (e.g. BOOT_FAILED, UNREACHABLE), "INTERNAL" for anything else. */
  code: string;
  message: string;
  phase: RunPhase;
  hint?: string;
}
