// The expected timeline when an operator releases a lost node's StatefulSet pods by hand, without
// the out-of-service taint: the pods go at once, but the RWO volume the dead kubelet last reported
// in use (node.status.volumesInUse, frozen) stays attached to the lost node. The attach-detach
// controller blocks the replacement (Multi-Attach) and detaches only once maxWaitForUnmountDuration
// (6 minutes, hard-coded) has passed since the pod left — or, with kube-controller-manager's
// --disable-force-detach-on-timeout, never, until the node is tainted out-of-service.
// Sources: reference 000 (non-graceful shutdown, forced detach) and 004 (the field report), and
// pkg/controller/volume/attachdetach/reconciler/reconciler.go.
import {
  expectedLossAndEviction,
  FORCED_DETACH_WAIT_MS,
  knobs,
  OUT_OF_SERVICE_MILESTONE,
  statefulSets,
  type ExpectedMilestone,
  type ModelKnobs,
  type NodeLossExpectationOptions,
} from "./model.js";

/** How the operator releases the pods. */
export type ReleaseByHand =
  /** `kubectl delete pod --force --grace-period=0` on each StatefulSet pod once the node is Unknown. */
  | "force-delete"
  /** `kubectl drain --force --delete-emptydir-data --ignore-daemonsets --grace-period=0` on the node. */
  | "drain";

/** The scenario's mark: the moment the operator's command was issued. */
export const RELEASED_BY_HAND_MILESTONE = "released-by-hand";
/** How long past the forced-detach point the detach-disabled scenario watches before tainting. */
export const PAST_FORCED_DETACH_MS = 30_000;

export interface ByHandExpectationOptions extends Omit<NodeLossExpectationOptions, "mode"> {
  release: ReleaseByHand;
  /** kube-controller-manager runs with --disable-force-detach-on-timeout; the scenario then taints by hand. */
  forceDetachDisabled: boolean;
  /** kube-controller-manager's log is readable (forced-detach:* milestones). Default false. */
  controllerManagerLogged?: boolean;
}

/** The volume's path back once the detach has started: gone, attached elsewhere, pod Ready. */
function afterDetach(k: ModelKnobs): ExpectedMilestone[] {
  const { window, attachMs, podStartMs } = k;
  return [
    window("va-gone", "va-detach-started", 0, 2000, "the attacher releases the deleted VolumeAttachment"),
    window(
      "va-attached-elsewhere",
      "va-gone",
      attachMs,
      attachMs + 2000,
      `the blocked attach to the new node goes ahead (${attachMs} ms)`,
    ),
    window(
      "statefulset:recovered",
      "va-attached-elsewhere",
      podStartMs,
      podStartMs + 1500,
      `volume attached, then container start (${podStartMs} ms)`,
    ),
  ];
}

export function expectedReleaseByHand(options: ByHandExpectationOptions): ExpectedMilestone[] {
  const k = knobs(options);
  const { window, podStartMs } = k;
  const how =
    options.release === "drain"
      ? "kubectl drain --force --grace-period=0 evicts them with no grace"
      : "kubectl delete --force --grace-period=0";
  // A drain evicts the Deployment's pods too, with no grace: they go with the StatefulSet's, well
  // before the unreachable toleration would have evicted them.
  const drained = options.release === "drain";
  const expected: ExpectedMilestone[] = [
    ...expectedLossAndEviction(k, options.profile).filter(
      (e) => !drained || !e.name.startsWith("deployment:"),
    ),
    window(
      RELEASED_BY_HAND_MILESTONE,
      "node-ready-unknown",
      0,
      2000,
      "the operator acts once the node is Unknown",
    ),
    {
      name: "volumes-in-use-changed",
      after: "fault-injected",
      minMs: 0,
      maxMs: null,
      why: "a dead kubelet's last volumesInUse report stays as it was",
    },
  ];
  if (drained) {
    expected.push(
      window("deployment:pod-gone", RELEASED_BY_HAND_MILESTONE, 0, 1000, `${how}: the pods go at once`),
      window(
        "deployment:replacement-created",
        "deployment:pod-gone",
        0,
        1000,
        "the ReplicaSet replaces a deleted pod at once",
      ),
      window(
        "deployment:recovered",
        "deployment:replacement-created",
        podStartMs,
        podStartMs + 1000,
        `scheduling + container start (${podStartMs} ms)`,
      ),
    );
  }
  for (const { id, hasVolume } of statefulSets(k)) {
    expected.push(
      window(`${id}:pod-gone`, RELEASED_BY_HAND_MILESTONE, 0, 1000, `${how}: the pod object goes at once`),
      window(
        `${id}:replacement-created`,
        `${id}:pod-gone`,
        0,
        1000,
        "the StatefulSet recreates the pod once the old one is gone",
      ),
    );
    if (!hasVolume) {
      expected.push(
        window(
          `${id}:recovered`,
          `${id}:replacement-created`,
          podStartMs,
          podStartMs + 1000,
          `no volume to wait for: scheduling + container start (${podStartMs} ms)`,
        ),
      );
    }
  }
  if (!statefulSets(k).some((s) => s.hasVolume)) return expected;

  expected.push(
    window(
      "multi-attach",
      "statefulset:replacement-created",
      0,
      2000,
      "the volume is still attached to the lost node: FailedAttachVolume, Multi-Attach error",
    ),
  );
  const logged = options.controllerManagerLogged === true;
  if (!options.forceDetachDisabled) {
    expected.push(
      window(
        "va-detach-started",
        "statefulset:pod-gone",
        FORCED_DETACH_WAIT_MS,
        FORCED_DETACH_WAIT_MS + 1000,
        "maxWaitForUnmountDuration (6 min, hard-coded) from the detach request, then a forced detach",
      ),
      ...(logged
        ? [
            window(
              "forced-detach:timeout",
              "statefulset:pod-gone",
              FORCED_DETACH_WAIT_MS,
              FORCED_DETACH_WAIT_MS + 1000,
              "kube-controller-manager logs the timeout-forced detach",
            ),
          ]
        : []),
      ...afterDetach(k),
    );
    return expected;
  }
  expected.push(
    {
      name: "forced-detach:timeout",
      after: "fault-injected",
      minMs: 0,
      maxMs: null,
      why: "--disable-force-detach-on-timeout: the 6-minute timeout never detaches",
    },
    window(
      OUT_OF_SERVICE_MILESTONE,
      "statefulset:pod-gone",
      FORCED_DETACH_WAIT_MS + PAST_FORCED_DETACH_MS,
      FORCED_DETACH_WAIT_MS + PAST_FORCED_DETACH_MS + 2000,
      `the scenario taints by hand ${PAST_FORCED_DETACH_MS / 1000} s past the point a timeout would have detached`,
    ),
    window(
      "va-detach-started",
      OUT_OF_SERVICE_MILESTONE,
      0,
      1000,
      "only the out-of-service taint releases the volume (never before it)",
    ),
    ...(logged
      ? [
          window(
            "forced-detach:out-of-service",
            OUT_OF_SERVICE_MILESTONE,
            0,
            1000,
            "kube-controller-manager logs the out-of-service detach",
          ),
        ]
      : []),
    ...afterDetach(k),
  );
  return expected;
}
