// The expected timeline of a node-loss scenario, computed from the cluster's timing knobs. Each
// milestone's window is relative to an anchor milestone, so windows can be resolved against what
// actually happened (a late node-unknown shifts everything after it) or chained from the fault
// to predict the whole timeline (`nominalWindows`).
import type { TimingProfile } from "../cluster/profiles.js";

/** PodGC's fixed loop: force-deletes terminating pods on NotReady, out-of-service nodes. */
export const POD_GC_PERIOD_MS = 20_000;
/** The attach-detach controller's hard-coded maxWaitForUnmountDuration before a forced detach. */
export const FORCED_DETACH_WAIT_MS = 6 * 60_000;

export interface ExpectedMilestone {
  name: string;
  /** Milestone the window is measured from ("fault-injected" for the fault itself). */
  after: string;
  minMs: number;
  /** null: must NOT happen while the scenario observes. */
  maxMs: number | null;
  /** One line: which knob or mechanism sets this window. */
  why: string;
}

export type RecoveryMode =
  /** Nothing helps: upstream behaviour. */
  | "baseline"
  /** An operator applies node.kubernetes.io/out-of-service by hand after the node is lost. */
  | "manual-out-of-service";

export interface NodeLossExpectationOptions {
  profile: TimingProfile;
  mode: RecoveryMode;
  /** Simulated (or typical real) container start latency. Default 1000 ms (the sim default). */
  podStartMs?: number;
  /** Attach latency of the CSI attacher. Default 500 ms (the sim default). */
  attachMs?: number;
  /** Tolerance added to every upper bound (and taken from lower bounds) for scheduling noise. Default 3000 ms. */
  slackMs?: number;
  /** Whether the StatefulSet's pod has a ReadWriteOnce volume. Default true. */
  statefulSetHasVolume?: boolean;
}

export const OUT_OF_SERVICE_MILESTONE = "taint-added:node.kubernetes.io/out-of-service";
export const UNREACHABLE_MILESTONE = "taint-added:node.kubernetes.io/unreachable";

export function expectedNodeLoss(options: NodeLossExpectationOptions): ExpectedMilestone[] {
  const p = options.profile;
  const s = (seconds: number) => seconds * 1000;
  const slack = options.slackMs ?? 3000;
  const podStart = options.podStartMs ?? 1000;
  const attach = options.attachMs ?? 500;
  const renew = s(p.nodeLeaseDurationSeconds) / 4;
  const grace = s(p.nodeMonitorGracePeriodSeconds);
  const period = s(p.nodeMonitorPeriodSeconds);
  const tolerance = s(p.defaultUnreachableTolerationSeconds);
  const evictionGap = 1000 / p.nodeEvictionRate;
  const window = (
    name: string,
    after: string,
    minMs: number,
    maxMs: number | null,
    why: string,
  ): ExpectedMilestone => ({
    name,
    after,
    minMs: Math.max(0, minMs - slack),
    maxMs: maxMs === null ? null : maxMs + slack,
    why,
  });
  const expected: ExpectedMilestone[] = [
    window(
      "node-ready-unknown",
      "fault-injected",
      grace - renew,
      grace + period,
      `lease renewed every ${renew} ms; --node-monitor-grace-period ${grace} ms checked every ${period} ms`,
    ),
    window(
      UNREACHABLE_MILESTONE,
      "node-ready-unknown",
      0,
      evictionGap,
      `NoExecute tainting, rate-limited to ${p.nodeEvictionRate} nodes/s per healthy zone`,
    ),
    window(
      "deployment:pod-deletion-requested",
      UNREACHABLE_MILESTONE,
      tolerance,
      tolerance + 1000,
      `default unreachable toleration ${tolerance} ms`,
    ),
    window(
      "deployment:replacement-created",
      "deployment:pod-deletion-requested",
      0,
      1000,
      "ReplicaSet replaces a terminating pod at once",
    ),
    window(
      "deployment:recovered",
      "deployment:replacement-created",
      podStart,
      podStart + 1000,
      `scheduling + container start (${podStart} ms)`,
    ),
    window(
      "statefulset:pod-deletion-requested",
      UNREACHABLE_MILESTONE,
      tolerance,
      tolerance + 1000,
      `default unreachable toleration ${tolerance} ms`,
    ),
  ];
  if (options.mode === "baseline") {
    expected.push(
      window(
        "statefulset:pod-gone",
        "statefulset:pod-deletion-requested",
        0,
        null,
        "no kubelet confirms the deletion: Terminating forever",
      ),
      window(
        "statefulset:replacement-ready",
        "statefulset:pod-deletion-requested",
        0,
        null,
        "the StatefulSet waits for the old pod to be gone",
      ),
    );
    if (options.statefulSetHasVolume !== false) {
      expected.push(
        window(
          "va-gone",
          "fault-injected",
          0,
          null,
          "the pod is never gone, so the volume is never detached",
        ),
      );
    }
    return expected;
  }
  expected.push(
    window(
      "statefulset:pod-gone",
      OUT_OF_SERVICE_MILESTONE,
      0,
      POD_GC_PERIOD_MS + 1000,
      `PodGC loop (${POD_GC_PERIOD_MS} ms) force-deletes pods of NotReady out-of-service nodes`,
    ),
    window(
      "statefulset:replacement-created",
      "statefulset:pod-gone",
      0,
      1000,
      "the StatefulSet recreates the pod once the old one is gone",
    ),
  );
  if (options.statefulSetHasVolume === false) {
    expected.push(
      window(
        "statefulset:recovered",
        "statefulset:replacement-created",
        podStart,
        podStart + 1000,
        `scheduling + container start (${podStart} ms)`,
      ),
    );
    return expected;
  }
  expected.push(
    window(
      "va-gone",
      "statefulset:pod-gone",
      0,
      2000,
      "out-of-service skips the 6-minute wait: detach at once",
    ),
    window(
      "va-attached-elsewhere",
      "va-gone",
      attach,
      attach + 2000,
      `attach on the new node (${attach} ms)`,
    ),
    window(
      "statefulset:recovered",
      "va-attached-elsewhere",
      podStart,
      podStart + 1500,
      `volume manager sees the attachment, then container start (${podStart} ms)`,
    ),
  );
  return expected;
}

export interface NominalWindow {
  name: string;
  /** ms after the fault; maxMs null = never. */
  minMs: number;
  maxMs: number | null;
}

/**
 * Chains every window from the fault: the prediction for the whole timeline. Milestones that hang
 * off a manual action (the out-of-service taint) are chained from `manualActionAtMs` when given.
 */
export function nominalWindows(
  expected: readonly ExpectedMilestone[],
  anchors: Record<string, number> = { "fault-injected": 0 },
): NominalWindow[] {
  const resolved = new Map<string, NominalWindow>(
    Object.entries(anchors).map(([name, at]) => [name, { name, minMs: at, maxMs: at }]),
  );
  const out: NominalWindow[] = [];
  let progress = true;
  while (progress) {
    progress = false;
    for (const e of expected) {
      if (resolved.has(e.name)) continue;
      const anchor = resolved.get(e.after);
      if (!anchor) continue;
      const window: NominalWindow = {
        name: e.name,
        minMs: anchor.minMs + e.minMs,
        maxMs: e.maxMs === null || anchor.maxMs === null ? null : anchor.maxMs + e.maxMs,
      };
      resolved.set(e.name, window);
      out.push(window);
      progress = true;
    }
  }
  return out;
}

/** The recovery controller's timing knobs, as the model needs them. */
export interface ControllerTimingSettings {
  /** Lease age at which the controller counts a node as lost. */
  unhealthyAfterMs: number;
  /** How often it checks Leases. */
  checkIntervalMs: number;
  /** Power off (or isolate) plus confirmation by the fence driver. */
  fenceMs: number;
  /** Force deletion of the node's pods and VolumeAttachments after the out-of-service taint. */
  cleanupMs: number;
}

export interface ControllerExpectationOptions extends Omit<NodeLossExpectationOptions, "mode"> {
  controller: ControllerTimingSettings;
}

/**
 * Node loss with the recovery controller: detect from Lease age, fence, taint out-of-service,
 * force-delete. The Deployment recovers by whichever comes first, the controller's cleanup or the
 * taint manager's eviction after the default toleration, so its window is anchored at the fault.
 */
export function expectedNodeLossWithController(options: ControllerExpectationOptions): ExpectedMilestone[] {
  const p = options.profile;
  const c = options.controller;
  const slack = options.slackMs ?? 3000;
  const podStart = options.podStartMs ?? 1000;
  const attach = options.attachMs ?? 500;
  const renew = (p.nodeLeaseDurationSeconds * 1000) / 4;
  const grace = p.nodeMonitorGracePeriodSeconds * 1000;
  const period = p.nodeMonitorPeriodSeconds * 1000;
  const tolerance = p.defaultUnreachableTolerationSeconds * 1000;
  const window = (
    name: string,
    after: string,
    minMs: number,
    maxMs: number,
    why: string,
  ): ExpectedMilestone => ({
    name,
    after,
    minMs: Math.max(0, minMs - slack),
    maxMs: maxMs + slack,
    why,
  });
  const taintMin = Math.max(0, c.unhealthyAfterMs - renew);
  const taintMax = c.unhealthyAfterMs + c.checkIntervalMs + c.fenceMs;
  // Deployment: controller path (taint + cleanup) or eviction path (Unknown + toleration), the earlier.
  const evictMin = grace - renew + tolerance;
  const evictMax = grace + period + 1000 / p.nodeEvictionRate + tolerance + 1000;
  const deploymentMin = Math.min(taintMin, evictMin) + podStart;
  const deploymentMax = Math.min(taintMax + c.cleanupMs, evictMax) + podStart + 2000;
  const expected: ExpectedMilestone[] = [
    window(
      OUT_OF_SERVICE_MILESTONE,
      "fault-injected",
      taintMin,
      taintMax,
      `controller: Lease older than ${c.unhealthyAfterMs} ms (checked every ${c.checkIntervalMs} ms), then a confirmed fence (${c.fenceMs} ms)`,
    ),
    window(
      "deployment:recovered",
      "fault-injected",
      deploymentMin,
      deploymentMax,
      "the earlier of the controller's cleanup and the taint manager's eviction, then start",
    ),
    window(
      "statefulset:pod-gone",
      OUT_OF_SERVICE_MILESTONE,
      0,
      Math.min(c.cleanupMs, POD_GC_PERIOD_MS + 1000),
      "controller force-deletes the node's pods (PodGC is the backstop)",
    ),
    window(
      "statefulset:replacement-created",
      "statefulset:pod-gone",
      0,
      1000,
      "the StatefulSet recreates the pod once the old one is gone",
    ),
  ];
  if (options.statefulSetHasVolume === false) {
    expected.push(
      window(
        "statefulset:recovered",
        "statefulset:replacement-created",
        podStart,
        podStart + 1000,
        `scheduling + container start (${podStart} ms)`,
      ),
    );
    return expected;
  }
  expected.push(
    window(
      "va-gone",
      "statefulset:pod-gone",
      0,
      2000,
      "out-of-service: detach at once (the controller also removes leftovers)",
    ),
    window(
      "va-attached-elsewhere",
      "va-gone",
      attach,
      attach + 2000,
      `attach on the new node (${attach} ms)`,
    ),
    window(
      "statefulset:recovered",
      "va-attached-elsewhere",
      podStart,
      podStart + 1500,
      `volume attached, then container start (${podStart} ms)`,
    ),
  );
  return expected;
}
