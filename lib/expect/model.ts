// The expected timeline of a node-loss scenario, computed from the cluster's timing knobs. Each
// milestone's window is relative to an anchor milestone (see windows.ts), so windows can be
// resolved against what actually happened (a late node-unknown shifts everything after it) or
// chained from the fault to predict the whole timeline (`nominalWindows`).
import { leaseRenewIntervalMs, type TimingProfile } from "../cluster/profiles.js";
import { missedRenewalAfterMs } from "../controller/observations.js";
import { POD_GC_PERIOD_MS } from "../kube/podgc-pass.js";
import { WATCH_SKEW_MS, windowMaker, type ExpectedMilestone, type WindowFn } from "./windows.js";

export { nominalWindows, type ExpectedMilestone, type NominalWindow } from "./windows.js";

// PodGC's fixed loop: force-deletes terminating pods on NotReady, out-of-service nodes.
export { POD_GC_PERIOD_MS };
/** The attach-detach controller's hard-coded maxWaitForUnmountDuration before a forced detach. */
export const FORCED_DETACH_WAIT_MS = 6 * 60_000;

export type RecoveryMode =
  /** Nothing helps: upstream behaviour. */
  | "baseline"
  /** An operator applies node.kubernetes.io/out-of-service by hand after the node is lost. */
  | "manual-out-of-service";

export interface NodeLossExpectationOptions {
  profile: TimingProfile;
  mode: RecoveryMode;
  /** The provider's container start latency (simulated on the sim, typical on kind). */
  podStartMs: number;
  /** The provider's volume attach latency. */
  attachMs: number;
  /** After the attach, until the kubelet has the volume mounted (ProviderLatencies). Default 0. */
  attachSeenMs?: number;
  /** Tolerance added to every upper bound (and taken from lower bounds) for scheduling noise. Default: the profile's. */
  slackMs?: number;
  /**
   * Whether the StatefulSet's volume is attached to its node (a VolumeAttachment that must be
   * detached before it attaches elsewhere). Default true (the sim's CSI driver); false for
   * storage with no attach step, such as the kind provider's shared hostPath volumes.
   */
  volumeAttachRequired?: boolean;
}

export const OUT_OF_SERVICE_MILESTONE = "taint-added:node.kubernetes.io/out-of-service";
export const UNREACHABLE_MILESTONE = "taint-added:node.kubernetes.io/unreachable";

export interface ModelKnobs {
  window: WindowFn;
  renewMs: number;
  graceMs: number;
  periodMs: number;
  toleranceMs: number;
  evictionGapMs: number;
  podStartMs: number;
  attachMs: number;
  attachSeenMs: number;
  /** The volume has an attach step (see volumeAttachRequired). */
  hasVolume: boolean;
  /** The slack `window` widens every window by (for models that widen once, at the end). */
  slackMs: number;
}

export function knobs(options: Omit<NodeLossExpectationOptions, "mode">): ModelKnobs {
  const p = options.profile;
  const slackMs = options.slackMs ?? p.slackMs;
  return {
    window: windowMaker(slackMs),
    renewMs: leaseRenewIntervalMs(p),
    graceMs: p.nodeMonitorGracePeriodSeconds * 1000,
    periodMs: p.nodeMonitorPeriodSeconds * 1000,
    toleranceMs: p.defaultUnreachableTolerationSeconds * 1000,
    evictionGapMs: 1000 / p.nodeEvictionRate,
    podStartMs: options.podStartMs,
    attachMs: options.attachMs,
    attachSeenMs: options.attachSeenMs ?? 0,
    hasVolume: options.volumeAttachRequired !== false,
    slackMs,
  };
}

/** The StatefulSets a node-loss scenario watches: one with an RWO volume, one without. */
export const STATEFUL_SETS: readonly { id: string; hasVolume: boolean }[] = [
  { id: "statefulset", hasVolume: true },
  { id: "statefulset-plain", hasVolume: false },
];

export function statefulSets(k: ModelKnobs): { id: string; hasVolume: boolean }[] {
  return STATEFUL_SETS.map((s) => ({ ...s, hasVolume: s.hasVolume && k.hasVolume }));
}

/**
 * From the old StatefulSet pod gone to its replacement Ready, with the volume's detach and attach.
 * `detach` names how the volume leaves the lost node, ending in "va-gone"; by default the
 * out-of-service taint's at-once detach.
 */
export function statefulSetReturn(
  k: ModelKnobs,
  id: string,
  hasVolume: boolean,
  detach: readonly ExpectedMilestone[] = [
    k.window(
      "va-gone",
      `${id}:pod-gone`,
      -WATCH_SKEW_MS,
      2000,
      `out-of-service skips the 6-minute wait: detach at once (the VolumeAttachment watch may deliver up to ${WATCH_SKEW_MS} ms before the pod's)`,
    ),
  ],
): ExpectedMilestone[] {
  const { window, podStartMs, attachMs, attachSeenMs } = k;
  const created = window(
    `${id}:replacement-created`,
    `${id}:pod-gone`,
    0,
    1000,
    "the StatefulSet recreates the pod once the old one is gone",
  );
  if (!hasVolume) {
    return [
      created,
      window(
        `${id}:recovered`,
        `${id}:replacement-created`,
        podStartMs,
        podStartMs + 1000,
        `scheduling + container start (${podStartMs} ms)`,
      ),
    ];
  }
  return [
    created,
    ...detach,
    window(
      "va-attached-elsewhere",
      "va-gone",
      attachMs,
      attachMs + 2000,
      `attach on the new node (${attachMs} ms)`,
    ),
    window(
      `${id}:recovered`,
      "va-attached-elsewhere",
      podStartMs,
      podStartMs + 1500 + attachSeenMs,
      attachSeenText(podStartMs, attachSeenMs),
    ),
  ];
}

/** A Deployment pod marked for deletion: replaced at once, the replacement started. */
export function deploymentReplacement(k: ModelKnobs): ExpectedMilestone[] {
  const { window, podStartMs } = k;
  return [
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
      podStartMs,
      podStartMs + 1000,
      `scheduling + container start (${podStartMs} ms)`,
    ),
  ];
}

/**
 * The node lifecycle controller's part of every abrupt node loss: Unknown after the grace period,
 * the unreachable taint, and the Deployment's pod evicted after its toleration and replaced.
 */
export function expectedLossAndEviction(k: ModelKnobs, profile: TimingProfile): ExpectedMilestone[] {
  const { window, renewMs, graceMs, periodMs, toleranceMs } = k;
  return [
    window(
      "node-ready-unknown",
      "fault-injected",
      graceMs - renewMs,
      graceMs + periodMs,
      `lease renewed every ${renewMs} ms; --node-monitor-grace-period ${graceMs} ms checked every ${periodMs} ms`,
    ),
    window(
      UNREACHABLE_MILESTONE,
      "node-ready-unknown",
      0,
      k.evictionGapMs,
      `NoExecute tainting, rate-limited to ${profile.nodeEvictionRate} nodes/s per healthy zone`,
    ),
    window(
      "deployment:pod-deletion-requested",
      UNREACHABLE_MILESTONE,
      toleranceMs,
      toleranceMs + 1000,
      `default unreachable toleration ${toleranceMs} ms`,
    ),
    ...deploymentReplacement(k),
  ];
}

export function expectedNodeLoss(options: NodeLossExpectationOptions): ExpectedMilestone[] {
  const k = knobs(options);
  const { window, toleranceMs } = k;
  const expected: ExpectedMilestone[] = [
    ...expectedLossAndEviction(k, options.profile),
    ...statefulSets(k).map(({ id }) =>
      window(
        `${id}:pod-deletion-requested`,
        UNREACHABLE_MILESTONE,
        toleranceMs,
        toleranceMs + 1000,
        `default unreachable toleration ${toleranceMs} ms`,
      ),
    ),
  ];
  if (options.mode === "baseline") {
    for (const { id } of statefulSets(k)) {
      expected.push(
        window(
          `${id}:pod-gone`,
          `${id}:pod-deletion-requested`,
          0,
          null,
          "no kubelet confirms the deletion: Terminating forever",
        ),
        window(
          `${id}:replacement-ready`,
          `${id}:pod-deletion-requested`,
          0,
          null,
          "the StatefulSet waits for the old pod to be gone",
        ),
      );
    }
    if (k.hasVolume)
      expected.push(
        window(
          "va-gone",
          "fault-injected",
          0,
          null,
          "the pod is never gone, so the volume is never detached",
        ),
      );
    return expected;
  }
  for (const { id, hasVolume } of statefulSets(k)) {
    expected.push(
      window(
        `${id}:pod-gone`,
        OUT_OF_SERVICE_MILESTONE,
        0,
        POD_GC_PERIOD_MS + 1000,
        `PodGC loop (${POD_GC_PERIOD_MS} ms) force-deletes pods of NotReady out-of-service nodes`,
      ),
      ...statefulSetReturn(k, id, hasVolume),
    );
  }
  return expected;
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
  /**
   * The controller reads a silent node's power at its first missed renewal (ControllerConfig's
   * earlyPowerRead): a node powered off is judged lost then, not after unhealthyAfter. Default false.
   */
  earlyPowerRead?: boolean;
  /**
   * The fence driver hears of power losses (FenceDriver.watchPowerLoss): a node powered off is read
   * at once, not at its first missed renewal. Default false.
   */
  powerLossNotices?: boolean;
}

/**
 * When the controller judges a powered-off node lost, from the fault, if it reads power early: at
 * its first missed renewal (lib/controller/observations.ts), seen at a check, the read answered by
 * the next; or at once, when its fence driver hears of the power loss (`powerLossNotices`:
 * the docker and sim drivers do, early-power.ts), hence no lower bound then. Undefined: it waits unhealthyAfter (no early
 * read, or a renewal interval too long for one to come first).
 */
export function earlyDetectionBounds(
  renewMs: number,
  c: Pick<
    ControllerTimingSettings,
    "earlyPowerRead" | "powerLossNotices" | "checkIntervalMs" | "unhealthyAfterMs"
  >,
): { minMs: number; maxMs: number } | undefined {
  if (c.earlyPowerRead !== true) return undefined;
  const missedMs = missedRenewalAfterMs(renewMs, c.checkIntervalMs);
  if (missedMs >= c.unhealthyAfterMs) return undefined;
  const minMs = c.powerLossNotices === true ? 0 : Math.max(0, missedMs - renewMs);
  return { minMs, maxMs: missedMs + 3 * c.checkIntervalMs };
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
  const k = knobs(options);
  const c = options.controller;
  const { window, renewMs, podStartMs } = k;
  // The controller's clock starts when it sees the last renewal (up to one check after it happened),
  // and it notices the silence at a check: two check intervals on top of unhealthyAfter at worst.
  // A node it reads off early (a stop, not a partition) is judged lost at its first missed renewal.
  const early = earlyDetectionBounds(renewMs, c);
  const taintMin = early?.minMs ?? Math.max(0, c.unhealthyAfterMs - renewMs);
  const taintMax = (early?.maxMs ?? c.unhealthyAfterMs + 2 * c.checkIntervalMs) + c.fenceMs;
  // Deployment: controller path (taint + cleanup) or eviction path (Unknown + toleration), the earlier.
  const evictMin = k.graceMs - renewMs + k.toleranceMs;
  const evictMax = k.graceMs + k.periodMs + k.evictionGapMs + k.toleranceMs + 1000;
  return [
    window(
      OUT_OF_SERVICE_MILESTONE,
      "fault-injected",
      taintMin,
      taintMax,
      `controller: no renewal seen for ${c.unhealthyAfterMs} ms (checked every ${c.checkIntervalMs} ms), then a confirmed fence (${c.fenceMs} ms)`,
    ),
    window(
      "deployment:recovered",
      "fault-injected",
      Math.min(taintMin, evictMin) + podStartMs,
      Math.min(taintMax + c.cleanupMs, evictMax) + podStartMs + 2000,
      "the earlier of the controller's cleanup and the taint manager's eviction, then start",
    ),
    ...statefulSets(k).flatMap(({ id, hasVolume }) => [
      window(
        `${id}:pod-gone`,
        OUT_OF_SERVICE_MILESTONE,
        0,
        Math.min(c.cleanupMs, POD_GC_PERIOD_MS + 1000),
        "controller force-deletes the node's pods (PodGC is the backstop)",
      ),
      ...statefulSetReturn(k, id, hasVolume),
    ]),
  ];
}

/** Why a pod with an attached volume starts when it does. */
export function attachSeenText(podStartMs: number, attachSeenMs: number): string {
  return attachSeenMs > 0
    ? `volume attached, mounted once a kubelet status write has reported it in use (up to ${attachSeenMs} ms), then container start (${podStartMs} ms)`
    : `volume attached, then container start (${podStartMs} ms)`;
}
