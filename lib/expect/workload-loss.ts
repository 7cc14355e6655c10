// How a lost node lets go of a workload's pods (stop and partition): the deletion request (its own
// unreachable toleration, the operator, the out-of-service taint) and the pod object going (never
// without a kubelet, at once by hand, PodGC or the controller after out-of-service, the kubelet
// itself after a partition heals). What follows (replacement, volume) is workload-return.ts.
import { DRAIN_STARTED_MILESTONE, RELEASED_BY_HAND_MILESTONE } from "./by-hand.js";
import { evictionAllowed } from "./disruption-budget.js";
import { OUT_OF_SERVICE_MILESTONE, POD_GC_PERIOD_MS, UNREACHABLE_MILESTONE } from "./model.js";
import { PARTITION_HEALED_MILESTONE } from "./node-windows.js";
import { raw, type RawWindow } from "./timeline-builder.js";
import type { LossContext } from "./workload-context.js";

/** How the lost pod object went: what the volume's detach then waits for. "unknown": the model cannot say. */
export type GoneHow = "out-of-service" | "by-hand" | "kubelet" | "never" | "unknown";

export interface Release {
  gone: GoneHow;
  /** Its pods are marked for deletion at some point (an at-deletion workload is replaced then). */
  deleted: boolean | "unknown";
}

const seconds = (ms: number) => `${ms / 1000} s`;

/** The taint manager's eviction after its own unreachable toleration, when the node is tainted. */
function tolerationPath(x: LossContext): RawWindow | undefined {
  const { b, f } = x;
  const tol = f.unreachableTolerationMs;
  if (tol === null || !b.expects(UNREACHABLE_MILESTONE)) return undefined;
  return raw(
    `${f.id}:pod-deletion-requested`,
    UNREACHABLE_MILESTONE,
    tol,
    tol + 1000,
    `its unreachable toleration (tolerationSeconds ${tol / 1000}${f.ownUnreachableToleration ? "" : ", the API server's default"})`,
  );
}

function neverDeleted(x: LossContext, why: string): Release {
  x.b.never(`${x.f.id}:pod-deletion-requested`, why);
  return { gone: "never", deleted: false };
}

/** Nobody acts: evicted after its toleration, then Terminating for good (no kubelet confirms it). */
function untended(x: LossContext): Release {
  const { b, f } = x;
  const evicted = tolerationPath(x);
  if (evicted === undefined) return neverDeleted(x, "it tolerates node.kubernetes.io/unreachable forever");
  b.add(evicted);
  b.window(
    `${f.id}:pod-gone`,
    `${f.id}:pod-deletion-requested`,
    0,
    null,
    "no kubelet confirms the deletion: Terminating forever",
  );
  return { gone: "never", deleted: true };
}

function forceDeleted(x: LossContext): Release {
  const { b, f } = x;
  const byHand = raw("", RELEASED_BY_HAND_MILESTONE, 0, 1000, "kubectl delete --force --grace-period=0");
  const evicted = tolerationPath(x);
  b.earliest(
    `${f.id}:pod-deletion-requested`,
    evicted ? [evicted, byHand] : [byHand],
    "the earlier of its toleration and the force deletion",
  );
  b.window(
    `${f.id}:pod-gone`,
    RELEASED_BY_HAND_MILESTONE,
    0,
    1000,
    "kubectl delete --force --grace-period=0: the pod object goes at once",
  );
  return { gone: "by-hand", deleted: true };
}

/**
 * kubectl drain: each pod is evicted through its PodDisruptionBudget, stays Terminating (no
 * kubelet), and the second drain with --grace-period=0 deletes what is Terminating by then. A pod
 * the budget refuses is taken to be refused by the second drain too, unless its toleration has
 * certainly evicted it before (a pod being deleted is no longer guarded by a budget).
 */
function drained(x: LossContext): Release {
  const { b, f, s } = x;
  const budget = evictionAllowed(f.disruptionBudget, f.replicas, s.lostPods);
  const evicted = tolerationPath(x);
  const second = b.bounds(RELEASED_BY_HAND_MILESTONE);
  const gone = (why: string): Release => {
    b.window(`${f.id}:pod-gone`, RELEASED_BY_HAND_MILESTONE, 0, 1000, why);
    return { gone: "by-hand", deleted: true };
  };
  if (budget.allowed) {
    const byDrain = raw("", DRAIN_STARTED_MILESTONE, 0, 1000, `the drain evicts it (${budget.why})`);
    b.earliest(
      `${f.id}:pod-deletion-requested`,
      evicted ? [evicted, byDrain] : [byDrain],
      "the earlier of its toleration and the drain",
    );
    return gone("the second drain (--grace-period=0) deletes the Terminating pod at once");
  }
  if (evicted === undefined) {
    b.never(
      `${f.id}:pod-deletion-requested`,
      `the drain is refused: ${budget.why}; and it tolerates unreachable forever`,
    );
    b.never(`${f.id}:pod-gone`, `the drain is refused: ${budget.why}`);
    return { gone: "never", deleted: false };
  }
  const tol = b.add({ ...evicted, why: `${evicted.why}; the drain is refused: ${budget.why}` });
  const tolBounds = b.bounds(tol.name);
  if (second === undefined || tolBounds?.maxMs == null || second.maxMs === null)
    return { gone: "unknown", deleted: true };
  if (tolBounds.maxMs <= second.minMs)
    return gone("evicted by its toleration before the second drain, which then deletes it");
  if (tolBounds.minMs > second.maxMs) {
    b.window(
      `${f.id}:pod-gone`,
      `${f.id}:pod-deletion-requested`,
      0,
      null,
      `the drain is refused (${budget.why}); Terminating forever once evicted`,
    );
    return { gone: "never", deleted: true };
  }
  return { gone: "unknown", deleted: true };
}

/**
 * The out-of-service taint (by hand): the taint manager evicts pods that do not tolerate it, and
 * PodGC force-deletes Terminating pods of a NotReady out-of-service node within its 20 s loop.
 */
function outOfService(x: LossContext): Release {
  const { b, f } = x;
  const oos = f.outOfServiceTolerationMs;
  const evicted = tolerationPath(x);
  const byTaint =
    oos === null
      ? undefined
      : raw(
          "",
          OUT_OF_SERVICE_MILESTONE,
          oos,
          oos + 1000,
          `the out-of-service taint evicts what does not tolerate it (${oos === 0 ? "at once" : `after tolerationSeconds ${oos / 1000}`})`,
        );
  const paths = [evicted, byTaint].filter((p): p is RawWindow => p !== undefined);
  if (paths.length === 0) return neverDeleted(x, "it tolerates both unreachable and out-of-service forever");
  b.earliest(
    `${f.id}:pod-deletion-requested`,
    paths,
    "the earlier of its toleration and the out-of-service taint",
  );
  // Evicted at the taint (the usual case): PodGC's wait counts from the taint and NotReady.
  const waitsFor =
    oos === 0
      ? [OUT_OF_SERVICE_MILESTONE, "node-ready-unknown"]
      : [OUT_OF_SERVICE_MILESTONE, "node-ready-unknown", `${f.id}:pod-deletion-requested`];
  const gone = b.afterAll(
    `${f.id}:pod-gone`,
    waitsFor,
    POD_GC_PERIOD_MS + 1000,
    `PodGC loop (${POD_GC_PERIOD_MS} ms) force-deletes pods of NotReady out-of-service nodes`,
  );
  return { gone: gone === undefined ? "unknown" : "out-of-service", deleted: true };
}

/** The controller fenced and tainted the node; it force-deletes the node's pods (PodGC is the backstop). */
function controllerCleanup(x: LossContext, cleanupMs: number): Release {
  const { b, f } = x;
  b.window(
    `${f.id}:pod-gone`,
    OUT_OF_SERVICE_MILESTONE,
    0,
    Math.min(cleanupMs, POD_GC_PERIOD_MS + 1000),
    "controller force-deletes the node's pods (PodGC is the backstop)",
  );
  return { gone: "out-of-service", deleted: true };
}

/** A partition without a fence: evicted if it outlasts the toleration; the kubelet ends the pod once healed. */
function partitioned(x: LossContext): Release {
  const { b, f, s } = x;
  const d = s.durationMs ?? Number.POSITIVE_INFINITY;
  const evicted = tolerationPath(x);
  if (evicted === undefined) {
    const why =
      f.unreachableTolerationMs === null
        ? "it tolerates unreachable forever"
        : "the node is never tainted unreachable";
    return neverDeleted(x, why);
  }
  const unreachable = b.bounds(UNREACHABLE_MILESTONE);
  if (unreachable?.maxMs == null) return { gone: "unknown", deleted: "unknown" };
  const earliest = unreachable.minMs + evicted.minMs;
  const latest = unreachable.maxMs + (evicted.maxMs ?? 0);
  // After the heal the kubelet reports Ready at its next status update and the node lifecycle
  // controller lifts the taint at its next pass; until then the eviction can still come.
  const healLagMs = s.eviction.statusUpdateIntervalMs + s.knobs.periodMs;
  if (d + healLagMs < earliest)
    return neverDeleted(x, `healed (${seconds(d)}) before its unreachable toleration ran out`);
  if (d <= latest) return { gone: "unknown", deleted: "unknown" };
  b.add(evicted);
  const grace = f.terminationGracePeriodMs;
  b.window(
    `${f.id}:pod-gone`,
    PARTITION_HEALED_MILESTONE,
    0,
    grace + s.eviction.statusUpdateIntervalMs,
    `the reconnected kubelet sees the deletion and ends the pod within its grace (${seconds(grace)})`,
  );
  return { gone: "kubelet", deleted: true };
}

/** The release of a stop or partition, by whoever acts first. */
export function releaseOnLoss(x: LossContext): Release {
  const { b, s } = x;
  const c = s.controller;
  if (c !== undefined && b.expects(OUT_OF_SERVICE_MILESTONE)) return controllerCleanup(x, c.cleanupMs);
  if (s.fault === "partition")
    return c !== undefined && !b.bounds(OUT_OF_SERVICE_MILESTONE)
      ? { gone: "unknown", deleted: "unknown" }
      : partitioned(x);
  switch (s.operator?.action) {
    case undefined:
      return untended(x);
    case "force-delete":
      return forceDeleted(x);
    case "drain":
      return drained(x);
    case "out-of-service":
      return outOfService(x);
  }
}
