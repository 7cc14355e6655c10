// The shape of one NodeFence status condition (metav1.Condition's fields) and the condition types
// the controller writes: a leaf, so the fence status (fence-state.ts) and the code that derives
// the conditions from it (fence-conditions.ts) both import it without importing each other.
export const FENCE_CONDITION_TYPES = ["Processing", "FenceSucceeded", "WorkloadsReleased"] as const;
export type FenceConditionType = (typeof FENCE_CONDITION_TYPES)[number];

export interface FenceCondition {
  type: FenceConditionType;
  status: "True" | "False" | "Unknown";
  /** CamelCase, one word: why the condition has this status. */
  reason: string;
  message: string;
  lastTransitionTime: string;
  /** The NodeFence's metadata.generation this condition was written for. */
  observedGeneration?: number;
}
