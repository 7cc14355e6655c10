// A workload coming back after its pods were let go: the replacement (at the deletion request, once
// the old pod is gone, or never), the RWO volume's detach and attach (at once after out-of-service,
// 6 minutes after a release by hand, never while the pod is not gone), recovered (as many
// replacements Ready as were lost), and its Service's ready endpoints lost and back.
import { attachSeenText, FORCED_DETACH_WAIT_MS, type ControllerTimingSettings } from "./model.js";
import { controllerTaintBounds } from "./node-windows.js";
import { FAULT } from "./timeline-builder.js";
import type { LossContext } from "./workload-context.js";
import type { WorkloadFacts } from "./workload-facts.js";
import type { GoneHow, Release } from "./workload-loss.js";
import { UNREACHABLE_MILESTONE } from "./model.js";
import { nodeLocalStart } from "./workload-node-local.js";
import { WATCH_SKEW_MS } from "./windows.js";

/** Who creates the replacement, for the windows' reasons. */
export function replacer(f: WorkloadFacts): string {
  switch (f.kind) {
    case "Deployment":
      return "the ReplicaSet";
    case "StatefulSet":
      return "the StatefulSet";
    case "Job":
      return "the Job controller";
    case "DaemonSet":
      return "the DaemonSet";
    case "Pod":
      return "nothing";
  }
}

/** Why `<id>:recovered` waits for this many replacements, and whether the workload serves meanwhile. */
export function servingNote(f: WorkloadFacts, lost: number): string {
  const rest = f.replicas - lost;
  return rest > 0
    ? `${lost} of ${f.replicas} replaced; ${rest} elsewhere keep serving meanwhile`
    : `all ${f.replicas} replica(s) were lost: nothing serves meanwhile`;
}

/** Never coming back on another node (bare Pod, DaemonSet). */
export function neverReplaced(x: LossContext): void {
  const { b, f } = x;
  const why =
    f.kind === "DaemonSet"
      ? "a DaemonSet runs one pod per node: it never replaces its pod on another node"
      : "a bare Pod has no controller: nothing replaces it";
  b.never(`${f.id}:recovered`, why);
}

/**
 * The RWO volume from the old pod gone to attached on the replacement's node; the name of the
 * milestone the replacement's start then waits for, or undefined when it never comes.
 */
function volumeReturn(x: LossContext, gone: GoneHow): string | undefined {
  const { b, f, s } = x;
  const id = f.id;
  const k = s.knobs;
  if ((gone === "never" || gone === "by-hand") && b.expects(`${id}:replacement-created`))
    b.window(
      `${id}:multi-attach`,
      `${id}:replacement-created`,
      0,
      2000,
      "the volume is still attached to the lost node: FailedAttachVolume, Multi-Attach error",
    );
  if (gone === "never") {
    b.never(`${id}:va-gone`, "the pod is never gone, so the volume is never detached");
    return undefined;
  }
  if (gone === "by-hand") {
    if (s.forceDetachDisabled === true) {
      b.never(
        `${id}:va-gone`,
        "--disable-force-detach-on-timeout: nothing detaches it until the node is tainted out-of-service",
      );
      return undefined;
    }
    b.window(
      `${id}:va-detach-started`,
      `${id}:pod-gone`,
      FORCED_DETACH_WAIT_MS,
      FORCED_DETACH_WAIT_MS + 1000,
      "maxWaitForUnmountDuration (6 min, hard-coded) from the detach request, then a forced detach",
    );
    b.window(
      `${id}:va-gone`,
      `${id}:va-detach-started`,
      0,
      2000,
      "the attacher releases the deleted VolumeAttachment",
    );
  } else {
    b.window(
      `${id}:va-gone`,
      `${id}:pod-gone`,
      -WATCH_SKEW_MS,
      2000,
      `out-of-service skips the 6-minute wait: detach at once (the VolumeAttachment watch may deliver up to ${WATCH_SKEW_MS} ms before the pod's)`,
    );
  }
  b.window(
    `${id}:va-attached-elsewhere`,
    `${id}:va-gone`,
    k.attachMs,
    k.attachMs + 2000,
    `attach on the new node (${k.attachMs} ms)`,
  );
  return `${id}:va-attached-elsewhere`;
}

/**
 * With the controller, a workload replaced at its deletion request comes back by whichever comes
 * first: the controller's cleanup or the taint manager's eviction after its own toleration. Its
 * window is anchored at the fault (as model.ts's Deployment).
 */
function controllerRace(x: LossContext, c: ControllerTimingSettings): { minMs: number; maxMs: number } {
  const { b, f, s } = x;
  const taint = controllerTaintBounds(s, c);
  const paths = [{ minMs: taint.minMs, maxMs: taint.maxMs + c.cleanupMs }];
  const unreachable = b.bounds(UNREACHABLE_MILESTONE);
  const tol = f.unreachableTolerationMs;
  if (tol !== null && unreachable?.maxMs != null)
    paths.push({ minMs: unreachable.minMs + tol, maxMs: unreachable.maxMs + tol + 1000 });
  return { minMs: Math.min(...paths.map((p) => p.minMs)), maxMs: Math.min(...paths.map((p) => p.maxMs)) };
}

function replacedAtDeletion(x: LossContext, release: Release): void {
  const { b, f, s } = x;
  const id = f.id;
  const k = s.knobs;
  const note = servingNote(f, s.lostPods);
  if (release.deleted === false) {
    b.never(
      `${id}:recovered`,
      `its pods are never marked for deletion, so ${replacer(f)} never replaces them`,
    );
    return;
  }
  if (release.deleted === "unknown") return;
  const c = s.controller;
  const race =
    c !== undefined && release.gone === "out-of-service" && !b.expects(`${id}:pod-deletion-requested`);
  if (race) {
    const { minMs, maxMs } = controllerRace(x, c);
    if (f.volume !== "rwo-attach" && f.volume !== "node-local") {
      b.window(
        `${id}:recovered`,
        FAULT,
        minMs + k.podStartMs,
        maxMs + k.podStartMs + 2000,
        `the earlier of the controller's cleanup and the taint manager's eviction, then start; ${note}`,
      );
      return;
    }
    b.window(
      `${id}:replacement-created`,
      FAULT,
      minMs,
      maxMs + 1000,
      `the earlier of the controller's cleanup and the taint manager's eviction: ${replacer(f)} replaces it at once`,
    );
  } else {
    b.window(
      `${id}:replacement-created`,
      `${id}:pod-deletion-requested`,
      0,
      1000,
      `${replacer(f)} replaces a terminating pod at once`,
    );
  }
  finishReturn(x, release.gone, note);
}

/**
 * The replacement's start: after its volume moves (an attached RWO volume), once the lost node is
 * back (a node-local volume), else at once.
 */
function finishReturn(x: LossContext, gone: GoneHow, note: string): void {
  const { b, f } = x;
  const k = x.s.knobs;
  if (f.volume === "rwo-attach") {
    finishWithVolume(x, gone, note);
    return;
  }
  if (f.volume === "node-local") {
    nodeLocalStart(x, note);
    return;
  }
  b.window(
    `${f.id}:recovered`,
    `${f.id}:replacement-created`,
    k.podStartMs,
    k.podStartMs + 1000,
    `scheduling + container start (${k.podStartMs} ms); ${note}`,
  );
}

function finishWithVolume(x: LossContext, gone: GoneHow, note: string): void {
  const { b, f, s } = x;
  const k = s.knobs;
  if (gone === "unknown") return;
  if (gone === "kubelet") {
    b.window(
      `${f.id}:recovered`,
      `${f.id}:pod-gone`,
      0,
      k.podStartMs + k.attachMs + 10_000,
      `the kubelet unmounts the volume, it detaches and attaches elsewhere, then start; ${note}`,
    );
    return;
  }
  const attached = volumeReturn(x, gone);
  if (attached === undefined) {
    b.never(
      `${f.id}:recovered`,
      `the replacement waits for the volume, which never leaves the lost node; ${note}`,
    );
    return;
  }
  b.window(
    `${f.id}:recovered`,
    attached,
    k.podStartMs,
    k.podStartMs + 1500 + k.attachSeenMs,
    `${attachSeenText(k.podStartMs, k.attachSeenMs)}; ${note}`,
  );
}

function replacedAfterGone(x: LossContext, release: Release): void {
  const { b, f, s } = x;
  const id = f.id;
  const note = servingNote(f, s.lostPods);
  if (release.gone === "unknown") return;
  if (release.gone === "never") {
    b.window(
      `${id}:replacement-ready`,
      `${id}:pod-deletion-requested`,
      0,
      null,
      `${replacer(f)} waits for the old pod to be gone`,
    );
    b.never(`${id}:recovered`, `${replacer(f)} waits for the old pod, which is never gone; ${note}`);
    if (f.volume === "rwo-attach") volumeReturn(x, "never");
    return;
  }
  b.window(
    `${id}:replacement-created`,
    `${id}:pod-gone`,
    0,
    1000,
    `${replacer(f)} recreates the pod once the old one is gone`,
  );
  finishReturn(x, release.gone, note);
}

/** The replacement and the volume after a stop or a partition, as the workload's kind does it. */
export function returnAfterLoss(x: LossContext, release: Release): void {
  switch (x.f.replacement) {
    case "never":
      neverReplaced(x);
      return;
    case "at-deletion":
      replacedAtDeletion(x, release);
      return;
    case "after-gone":
      replacedAfterGone(x, release);
      return;
  }
}
