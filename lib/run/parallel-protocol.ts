// The messages between `rekindle run --parallel` and each cluster's process (parallel-slot-main.ts),
// over the child's IPC channel. The parent owns the queue; a cluster's process asks it for the next
// scenario whenever its cluster is free.
import type { RekindleErrorCode } from "../errors.js";
import type { SlotPlan } from "./slot-plan.js";

export type ToSlot =
  /** The cluster's part of the run's plan (slot-plan.ts), checked on receipt. */
  | { type: "start"; slot: number; plan: SlotPlan }
  /** The answer to "next": a scenario id, or none left. */
  | { type: "scenario"; id: string | null }
  /** The run was interrupted: undo the current scenario, tear the cluster down, write the reports. */
  | { type: "abort" };

/** How a cluster's run ended (its summary.json holds the rest). */
export interface SlotDone {
  type: "done";
  failed: number;
  testFailures: number;
  /** The cluster's harness error (its summary.json says the same). */
  harnessError?: { code: RekindleErrorCode; message: string; hint?: string };
  interrupted: boolean;
}

export type FromSlot = { type: "next" } | SlotDone;

export function isToSlot(value: unknown): value is ToSlot {
  return typeof value === "object" && value !== null && "type" in value;
}

export function isFromSlot(value: unknown): value is FromSlot {
  return typeof value === "object" && value !== null && "type" in value;
}
