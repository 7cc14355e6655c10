// The expected timeline when an operator releases a lost node's StatefulSet pods by hand, without
// the out-of-service taint: the pods go at once, but the RWO volume the dead kubelet last reported
// in use (node.status.volumesInUse, frozen) stays attached to the lost node. The attach-detach
// controller blocks the replacement (Multi-Attach) and detaches only once maxWaitForUnmountDuration
// (6 minutes, hard-coded) has passed since the pod left — or, with kube-controller-manager's
// --disable-force-detach-on-timeout, never, until the node is tainted out-of-service.
// Sources: reference 000 (non-graceful shutdown, forced detach) and 004 (the field report), and
// pkg/controller/volume/attachdetach/reconciler/reconciler.go.
import {
  deploymentReplacement,
  expectedLossAndEviction,
  FORCED_DETACH_WAIT_MS,
  knobs,
  OUT_OF_SERVICE_MILESTONE,
  statefulSetReturn,
  statefulSets,
  type ExpectedMilestone,
  type ModelKnobs,
  type NodeLossExpectationOptions,
} from "./model.js";

/** How the operator releases the pods. */
export type ReleaseByHand =
  /** `kubectl delete pod --force --grace-period=0` on each StatefulSet pod once the node is Unknown. */
  | "force-delete"
  /**
   * `kubectl drain --force --delete-emptydir-data --ignore-daemonsets` once the node is Unknown:
   * its evictions keep each pod's grace, so with no kubelet the pods stay Terminating and the drain
   * times out; the operator drains again with `--grace-period=0`, which deletes them.
   */
  | "drain";

/** The scenario's mark: the moment the operator's command that releases the pods was issued. */
export const RELEASED_BY_HAND_MILESTONE = "released-by-hand";
/**
 * Before a force delete by hand, once the node's NoSchedule taint is in the API: time for the
 * scheduler's own watch to hold it too (lib/scenario/operator-actions.ts). A margin, not a
 * measured delay: a watch event reaches the scheduler in milliseconds on an idle control plane.
 */
export const SCHEDULER_CATCH_UP_MS = 1_000;
/** The drain scenario's marks: the first drain issued, and it giving up. */
export const DRAIN_STARTED_MILESTONE = "drain-started";
export const DRAIN_TIMED_OUT_MILESTONE = "drain-timed-out";
/** kubectl drain --timeout of the first drain: how long the operator waits before forcing it. */
export const DRAIN_TIMEOUT_MS = 20_000;
/** How much earlier a kube-controller-manager log stamp may read than rekindle's watch of the same change. */
export const LOG_BEFORE_WATCH_MS = 500;

/** How long past the forced-detach point the detach-disabled scenario watches before tainting. */
export const PAST_FORCED_DETACH_MS = 30_000;

export interface ByHandExpectationOptions extends Omit<NodeLossExpectationOptions, "mode"> {
  release: ReleaseByHand;
  /** kube-controller-manager runs with --disable-force-detach-on-timeout; the scenario then taints by hand. */
  forceDetachDisabled: boolean;
  /** kube-controller-manager's log is readable (forced-detach:* milestones). Default false. */
  controllerManagerLogged?: boolean;
}

/** The first drain: every pod evicted with its own grace, the StatefulSet ones stuck Terminating, a timeout, a second drain. */
function drainWindows(k: ModelKnobs): ExpectedMilestone[] {
  const { window } = k;
  return [
    window(
      DRAIN_STARTED_MILESTONE,
      "node-ready-unknown",
      0,
      2000,
      "the operator drains once the node is Unknown",
    ),
    window(
      "deployment:pod-deletion-requested",
      DRAIN_STARTED_MILESTONE,
      0,
      1000,
      "the drain evicts every pod but DaemonSet ones, each with its own grace",
    ),
    ...deploymentReplacement(k),
    ...statefulSets(k).map(({ id }) =>
      window(
        `${id}:pod-deletion-requested`,
        DRAIN_STARTED_MILESTONE,
        0,
        1000,
        "evicted with its grace, and no kubelet to confirm it: Terminating",
      ),
    ),
    window(
      DRAIN_TIMED_OUT_MILESTONE,
      DRAIN_STARTED_MILESTONE,
      DRAIN_TIMEOUT_MS,
      DRAIN_TIMEOUT_MS + 2000,
      `kubectl drain --timeout=${DRAIN_TIMEOUT_MS / 1000}s: the StatefulSet pods never finish terminating`,
    ),
    window(
      RELEASED_BY_HAND_MILESTONE,
      DRAIN_TIMED_OUT_MILESTONE,
      0,
      1000,
      "the operator drains again with --grace-period=0",
    ),
  ];
}

export function expectedReleaseByHand(options: ByHandExpectationOptions): ExpectedMilestone[] {
  const k = knobs(options);
  const { window } = k;
  const drained = options.release === "drain";
  const how = drained
    ? "kubectl drain --grace-period=0 deletes them with no grace"
    : "kubectl delete --force --grace-period=0";
  const expected: ExpectedMilestone[] = [
    // A drain evicts the Deployment's pods too, well before the unreachable toleration would.
    ...expectedLossAndEviction(k, options.profile).filter(
      (e) => !drained || !e.name.startsWith("deployment:"),
    ),
    ...(drained
      ? drainWindows(k)
      : [
          window(
            RELEASED_BY_HAND_MILESTONE,
            "node-ready-unknown",
            0,
            // The node lifecycle controller's NoSchedule taint, written apart from Unknown, and
            // the 100 ms poll for it: 2 s under load, as before the wait; then the wait above.
            2000 + SCHEDULER_CATCH_UP_MS,
            "the operator force-deletes once the node is Unknown and the scheduler keeps off it (its NoSchedule taint, then a second for the scheduler's watch)",
          ),
        ]),
    {
      name: "volumes-in-use-changed",
      after: "fault-injected",
      minMs: 0,
      maxMs: null,
      why: "a dead kubelet's last volumesInUse report stays as it was",
    },
  ];
  for (const { id, hasVolume } of statefulSets(k)) {
    expected.push(
      window(`${id}:pod-gone`, RELEASED_BY_HAND_MILESTONE, 0, 1000, `${how}: the pod object goes at once`),
      ...statefulSetReturn(k, id, hasVolume, hasVolume ? volumeHeld(k, id, options) : undefined),
    );
  }
  return expected;
}

/**
 * How the volume leaves the lost node when nobody tainted it: the replacement blocked by
 * Multi-Attach, then the forced detach 6 minutes after the pod went — or, forced detach disabled,
 * nothing until the scenario's out-of-service taint.
 */
function volumeHeld(k: ModelKnobs, id: string, options: ByHandExpectationOptions): ExpectedMilestone[] {
  const { window } = k;
  const logged = options.controllerManagerLogged === true;
  const podGone = `${id}:pod-gone`;
  const held = window(
    "multi-attach",
    `${id}:replacement-created`,
    0,
    2000,
    "the volume is still attached to the lost node: FailedAttachVolume, Multi-Attach error",
  );
  const gone = window(
    "va-gone",
    "va-detach-started",
    0,
    2000,
    "the attacher releases the deleted VolumeAttachment",
  );
  if (!options.forceDetachDisabled) {
    const forced = (name: string, why: string) =>
      window(name, podGone, FORCED_DETACH_WAIT_MS, FORCED_DETACH_WAIT_MS + 1000, why);
    return [
      held,
      forced(
        "va-detach-started",
        "maxWaitForUnmountDuration (6 min, hard-coded) from the detach request, then a forced detach",
      ),
      ...(logged
        ? [forced("forced-detach:timeout", "kube-controller-manager logs the timeout-forced detach")]
        : []),
      gone,
    ];
  }
  const afterTaint = (name: string, why: string) => window(name, OUT_OF_SERVICE_MILESTONE, 0, 1000, why);
  const taintAtMs = FORCED_DETACH_WAIT_MS + PAST_FORCED_DETACH_MS;
  return [
    held,
    {
      name: "forced-detach:timeout",
      after: "fault-injected",
      minMs: 0,
      maxMs: null,
      why: "--disable-force-detach-on-timeout: the 6-minute timeout never detaches",
    },
    window(
      OUT_OF_SERVICE_MILESTONE,
      podGone,
      taintAtMs,
      taintAtMs + 2000,
      `the scenario taints by hand ${PAST_FORCED_DETACH_MS / 1000} s past the point a timeout would have detached`,
    ),
    afterTaint("va-detach-started", "only the out-of-service taint releases the volume (never before it)"),
    ...(logged
      ? [
          // From the same anchor as the taint, not after it: the log line is stamped when
          // kube-controller-manager's informer saw the taint, which can be before rekindle's own
          // watch delivers it (18 ms once, under load). va-detach-started, seen by the same watch
          // as the taint, keeps the claim that nothing detaches before the taint.
          window(
            "forced-detach:out-of-service",
            podGone,
            taintAtMs - LOG_BEFORE_WATCH_MS,
            taintAtMs + 2000 + 1000,
            "kube-controller-manager logs the out-of-service detach once it sees the taint",
          ),
        ]
      : []),
    gone,
  ];
}
