// A workload whose volume stays on one node (local-path, local PersistentVolumes): its replacement
// can run only where the lost pod ran, so it stays Pending ("volume node affinity conflict") until
// that node returns, however the old pod went. Recovered after the return when the fault brings the
// node back (a partition healed, not fenced); otherwise not within the run.
import { OUT_OF_SERVICE_MILESTONE } from "./model.js";
import { PARTITION_HEALED_MILESTONE, PRESSURE_TAINT } from "./node-windows.js";
import { FAULT } from "./timeline-builder.js";
import type { LossContext } from "./workload-context.js";

/** When the lost node is back for its pods; `never`: not within the run, and why. */
export type NodeReturn = { anchor: string; lagMs: number; why: string } | { never: string } | "unknown";

/** Whether and when a stop, partition or graceful shutdown gives the node back. */
export function nodeReturn(x: LossContext): NodeReturn {
  const { b, s } = x;
  switch (s.fault) {
    case "stop":
      return { never: "a stop fault has no start: the node stays down for the rest of the run" };
    case "graceful-shutdown":
      return { never: "the node stays shut down for the rest of the run" };
    case "memory-pressure":
    case "disk-pressure":
      return "unknown";
    case "partition":
      break;
  }
  if (s.controller !== undefined) {
    if (b.expects(OUT_OF_SERVICE_MILESTONE))
      return {
        never: "the controller fences (powers off) the partitioned node, so the heal does not bring it back",
      };
    if (b.bounds(OUT_OF_SERVICE_MILESTONE) === undefined) return "unknown";
  }
  if (s.durationMs === undefined) return { never: "the partition is not healed within the run" };
  // The kubelet reports Ready at its next status update; the node lifecycle controller lifts the
  // unreachable and not-ready taints (NoSchedule too) at its next pass: then the pod can be placed.
  const lagMs = s.eviction.statusUpdateIntervalMs + s.knobs.periodMs;
  return {
    anchor: PARTITION_HEALED_MILESTONE,
    lagMs,
    why: "once the healed node reports Ready and its taints are lifted",
  };
}

/**
 * Its replacement expected never Ready: it waits for a node that does not return. (It may still be
 * scheduled to that node, by a force delete before the node is tainted, and never start there:
 * nothing is said of `<id>:replacement-scheduled`.)
 */
export function notBackWithinRun(x: LossContext, never: string, note: string): void {
  const { b, f } = x;
  const why = `its volume stays on the lost node (${f.nodeLocalWhy ?? "node-local"}): the replacement stays Pending (volume node affinity conflict) until the node returns, and ${never}; not recovered within the run`;
  b.never(`${f.id}:replacement-ready`, why);
  b.never(`${f.id}:recovered`, `${why}; ${note}`);
}

/** After a stop or partition: the replacement (created) starts once the node is back, on it. */
export function nodeLocalStart(x: LossContext, note: string): void {
  const { b, f } = x;
  const back = nodeReturn(x);
  if (back === "unknown") return;
  if ("never" in back) {
    notBackWithinRun(x, back.never, note);
    return;
  }
  const k = x.s.knobs;
  b.afterAll(
    `${f.id}:recovered`,
    [`${f.id}:replacement-created`, back.anchor],
    back.lagMs + k.podStartMs + 1000,
    `its volume stays on the lost node (${f.nodeLocalWhy ?? "node-local"}): the replacement stays Pending (volume node affinity conflict) and runs there ${back.why}, then starts (${k.podStartMs} ms); ${note}`,
  );
}

/**
 * After a pressure eviction: the replacement can only go back to the pressured node, which takes
 * it once the pressure taint is lifted (perhaps before it is added); with no end to the pressure
 * the model cannot say whether the kubelet admits it meanwhile, and sets no window.
 */
export function nodeLocalAfterPressure(
  x: LossContext,
  fault: "memory-pressure" | "disk-pressure",
  restartMs: number,
  note: string,
): void {
  const { b, f } = x;
  const lifted = b.bounds(`taint-removed:${PRESSURE_TAINT[fault]}`);
  if (lifted?.maxMs == null) return;
  b.window(
    `${f.id}:recovered`,
    FAULT,
    0,
    lifted.maxMs + restartMs,
    `its volume stays on the pressured node (${f.nodeLocalWhy ?? "node-local"}): the replacement can only go back there, at the latest once the pressure taint is lifted; ${note}`,
  );
}
