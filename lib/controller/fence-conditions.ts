// NodeFence status.conditions, derived from the fence's step and phase on every status write, in
// the shape of metav1.Condition (type, status, reason, message, lastTransitionTime,
// observedGeneration) as operators and `kubectl wait --for=condition=…` expect them. The step and
// phase stay the controller's own record; the conditions say the same for people and tools:
// - Processing: the fence is under way (True) or has run its course (False; reason Refused for a
//   NodeFence the controller will not act on);
// - FenceSucceeded: the node's power-off was confirmed (True), failed or never happened (False),
//   or is not known yet (Unknown);
// - WorkloadsReleased: the node's pods and volume attachments were released (True) or not (False).
// A condition's lastTransitionTime changes only when its status does.
import type { FenceCondition, FenceConditionType } from "./fence-condition-types.js";
import type { FenceStatus } from "./fence-state.js";

/** "power-management" + "error" → "PowerManagementError". */
function camel(...words: string[]): string {
  return words
    .flatMap((w) => w.split("-"))
    .map((w) => `${w.charAt(0).toUpperCase()}${w.slice(1)}`)
    .join("");
}

/** A timestamp field that is set (a merge patch's null, as an object may briefly hold, is not). */
function isSet(value: string | null | undefined): value is string {
  return typeof value === "string" && value !== "";
}

function isDone(status: FenceStatus): boolean {
  return status.step === "recovery" && status.phase === "done";
}

/** The conditions `status` implies, without times (those come from the previous conditions). */
function conditionsOf(
  status: FenceStatus,
): Omit<FenceCondition, "lastTransitionTime" | "observedGeneration">[] {
  const where = camel(status.step, status.phase);
  const message = status.message ?? `${status.step}/${status.phase}`;
  if (status.refused !== undefined) {
    // Never acted on: not under way, nothing fenced, nothing released.
    return [
      { type: "Processing", status: "False", reason: "Refused", message: status.refused },
      { type: "FenceSucceeded", status: "False", reason: "NotFenced", message: status.refused },
      { type: "WorkloadsReleased", status: "False", reason: "NotFenced", message: status.refused },
    ];
  }
  const done = isDone(status);
  const processing = done
    ? { status: "False" as const, reason: "Finished", message }
    : { status: "True" as const, reason: where, message };
  const confirmed = isSet(status.fencedAt);
  const powerManagement = status.step === "power-management";
  const fenced = confirmed
    ? {
        status: "True" as const,
        reason: "PowerOffConfirmed",
        message: `power-off confirmed at ${status.fencedAt ?? ""}`,
      }
    : powerManagement && status.phase === "error"
      ? { status: "False" as const, reason: "FenceFailed", message }
      : powerManagement
        ? {
            status: "Unknown" as const,
            reason: status.phase === "running" ? "PowerOffRequested" : "PowerOffPending",
            message,
          }
        : { status: "False" as const, reason: "NotFenced", message };
  const released = isSet(status.cleanedAt)
    ? { status: "True" as const, reason: "CleanupDone", message: `released at ${status.cleanedAt}` }
    : { status: "False" as const, reason: confirmed || !done ? where : "NotFenced", message };
  return [
    { type: "Processing", ...processing },
    { type: "FenceSucceeded", ...fenced },
    { type: "WorkloadsReleased", ...released },
  ];
}

/**
 * The conditions to write with `status`: each condition's lastTransitionTime is kept from
 * `previous` when its status did not change, else `nowIso`; every one carries `generation`.
 */
export function fenceConditions(
  status: FenceStatus,
  previous: readonly FenceCondition[] | undefined,
  generation: number | undefined,
  nowIso: string,
): FenceCondition[] {
  return conditionsOf(status).map((condition) => {
    const before = previous?.find((p) => p.type === condition.type);
    return {
      ...condition,
      lastTransitionTime:
        before !== undefined && before.status === condition.status ? before.lastTransitionTime : nowIso,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
  });
}

/** The condition of `type` in `status`, if written. */
export function fenceCondition(
  status: Pick<FenceStatus, "conditions"> | undefined,
  type: FenceConditionType,
): FenceCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}
