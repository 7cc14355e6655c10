// Node loss: a worker stops abruptly under a Deployment, a StatefulSet and a StatefulSet with an
// RWO volume. baseline: nothing helps (the StatefulSets stay down, by design);
// manual-out-of-service: an operator applies node.kubernetes.io/out-of-service after the loss;
// controller: the bundled recovery controller fences the node and releases its workloads.
//
// Released by hand, the operator's reflex without the out-of-service taint: once the
// node is Unknown its StatefulSet pods are force-deleted, or the node is drained (which hangs on
// the Terminating pods until it is run again with no grace). The pods go at once; the RWO volume
// does not, because the dead kubelet last reported it in use: the replacement is blocked by
// Multi-Attach until the attach-detach controller's 6-minute forced detach, or, with
// --disable-force-detach-on-timeout, until the out-of-service taint.
//
// Windows: baseline, out-of-service by hand and the controller's take theirs from the workload
// model fed with the fixture workloads (lib/scenario/node-loss-expected.ts), as scenario files do;
// the releases by hand from by-hand.ts (the operator acts once the node is Unknown, not at a set
// time, and the forced-detach log lines are judged: the workload model states neither).
import { shippedControllerSettings } from "../lib/controller/shipped-deployment.js";
import { describePhaseChoice } from "../lib/fault/phase-choice.js";
import {
  DRAIN_STARTED_MILESTONE,
  DRAIN_TIMED_OUT_MILESTONE,
  DRAIN_TIMEOUT_MS,
  expectedReleaseByHand,
  PAST_FORCED_DETACH_MS,
  RELEASED_BY_HAND_MILESTONE,
  type ReleaseByHand,
} from "../lib/expect/by-hand.js";
import { FORCED_DETACH_WAIT_MS, POD_GC_PERIOD_MS, type RecoveryMode } from "../lib/expect/model.js";
import { OUT_OF_SERVICE_TAINT } from "../lib/kube/queries.js";
import { addTaint, removeTaint } from "../lib/kube/taints.js";
import {
  deployWebAndDb,
  nodeLossModelInputs,
  nodeLossWorkloads,
  stopNodeAbruptly,
} from "../lib/scenario/common.js";
import {
  awaitNodeUnschedulable,
  DRAIN_FLAGS,
  drainNode,
  forceDeletePods,
  uncordonAfterDrain,
} from "../lib/scenario/operator-actions.js";
import { defineScenario, type ExpectationInputs, type ScenarioContext } from "../lib/scenario/harness.js";
import { deployControllerInCluster } from "../lib/scenario/in-cluster-controller.js";
import {
  expectedNodeLossWindows,
  expectNodeLossReach,
  type NodeLossRecovery,
} from "../lib/scenario/node-loss-expected.js";
import { awaitExpected, observeTail } from "../lib/scenario/observe-tail.js";
import { sleep } from "../lib/util/time.js";

export type NodeLossMode = RecoveryMode | "controller";

export const NODE_LOSS_TITLES: Readonly<Record<NodeLossMode, string>> = {
  baseline: "baseline: Deployment recovers after the toleration, the StatefulSet with a volume never does",
  "manual-out-of-service": "out-of-service taint by hand: PodGC frees the StatefulSet pod, its volume moves",
  controller:
    "recovery controller: fence, out-of-service taint, force delete; everything back well within a minute",
};

/**
 * Out-of-service by hand: the taint frees the pods at PodGC's next pass, so the scenario's times
 * after it are the pass's phase as much as anything (lib/fault/phase-choice.ts). The fault comes
 * 14 s after a pass: at the fast profile the taint followed the fault by 15.1-17.5 s (10 runs, kind
 * and sim), so the pass that frees the pods came 8.5-10.9 s after the taint, mid-way through PodGC's 20 s. At other profiles the
 * taint comes later, at a phase the same choice fixes; every provider chooses alike.
 */
const MANUAL_OUT_OF_SERVICE_PHASE = { loop: "PodGC", faultAfterPassMs: 14_000 } as const;

/** How long the baseline watches the StatefulSets stay stuck: 3 PodGC periods. */
const OBSERVE_STUCK_MS = 3 * POD_GC_PERIOD_MS;

/**
 * The volume's attach on the new node is judged, so it is awaited: the sim starts a pod without
 * waiting for its attach (a kubelet would not), and on a busy machine the attacher's write can
 * land after the pod is Ready, after the scenario would otherwise have stopped observing. Expected
 * (so awaited) only where the provider's volumes attach.
 */
const VOLUME_MOVED = "statefulset:va-attached-elsewhere";

/** The controller's recovery, nothing done by hand: each workload back, then the rest of the watch. */
async function awaitControllerRecovery(context: ScenarioContext): Promise<void> {
  await awaitExpected(
    context,
    "statefulset:recovered",
    VOLUME_MOVED,
    "statefulset-plain:recovered",
    "deployment:recovered",
  );
  await observeTail(context);
}

function recoveryOf(mode: NodeLossMode, inputs: ExpectationInputs): NodeLossRecovery {
  return mode === "controller" ? { mode, controller: inputs.controller } : { mode };
}

/**
 * Each milestone below is awaited only when the timeline the run expects has a window for it: a
 * workload with no pod on the lost node is untouched, and its milestones are not expected.
 */
function nodeLossScenario(mode: NodeLossMode) {
  return defineScenario({
    id: `node-loss/${mode}`,
    title: NODE_LOSS_TITLES[mode],
    requires: ["lifecycle"],
    usesController: mode === "controller",
    ...(mode === "manual-out-of-service"
      ? {
          faultPhase: MANUAL_OUT_OF_SERVICE_PHASE,
          note: () => `phase chosen: ${describePhaseChoice(MANUAL_OUT_OF_SERVICE_PHASE)}`,
        }
      : {}),
    expected: (inputs) => expectedNodeLossWindows(inputs, recoveryOf(mode, inputs)),
    workloads: nodeLossWorkloads,
    async run(context) {
      const { steps, kc } = context;
      const { statefulSetNode: node } = await deployWebAndDb(context);
      await expectNodeLossReach(context, node, recoveryOf(mode, context.inputs));
      if (mode === "controller") await context.startController();
      await stopNodeAbruptly(context, node);
      if (mode === "controller") {
        // Recovery is the controller's; nothing to do by hand.
        await awaitControllerRecovery(context);
        return;
      }
      await awaitExpected(
        context,
        "node-ready-unknown",
        "deployment:recovered",
        "statefulset:pod-deletion-requested",
        "statefulset-plain:pod-deletion-requested",
      );
      if (mode === "baseline") {
        await steps.step(`observe the StatefulSet stuck for ${OBSERVE_STUCK_MS / 1000}s`, () =>
          sleep(OBSERVE_STUCK_MS, context.signal),
        );
        return;
      }
      await steps.step(`taint ${node} ${OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute by hand`, async () => {
        await addTaint(kc, node, { key: OUT_OF_SERVICE_TAINT, value: "nodeshutdown", effect: "NoExecute" });
      });
      steps.registerUndo(`remove the out-of-service taint from ${node}`, async () => {
        await removeTaint(kc, node, OUT_OF_SERVICE_TAINT);
      });
      // The windows after the taint anchor on it, so the tail cannot time them: each is awaited.
      await awaitExpected(
        context,
        "statefulset:recovered",
        VOLUME_MOVED,
        "statefulset-plain:recovered",
        "deployment:pod-gone",
      );
    },
  });
}

export const nodeLossBaseline = nodeLossScenario("baseline");
export const nodeLossManualOutOfService = nodeLossScenario("manual-out-of-service");
export const nodeLossController = nodeLossScenario("controller");

/** The shipped manifest's controller settings (deploy/controller/). */
function inClusterRecovery(): NodeLossRecovery {
  return { mode: "controller", controller: shippedControllerSettings().config };
}

/**
 * The controller as users run it: its image built from the Dockerfile, deploy/controller/
 * applied unchanged (2 replicas, leader election, the manifest's --unhealthy-after, which the
 * expected timeline reads from it), the webhook fence driver powering the node off. No replica
 * runs on the lost node: losing the leader is controller-failover's scenario.
 */
export const nodeLossControllerInCluster = defineScenario({
  id: "node-loss/controller-in-cluster",
  title:
    "recovery controller in-cluster (deploy/controller/, 2 replicas, leader election): fence, out-of-service taint, force delete",
  requires: ["lifecycle", "in-cluster-controller"],
  expected: (inputs) => expectedNodeLossWindows(inputs, inClusterRecovery()),
  workloads: nodeLossWorkloads,
  async run(context) {
    const { statefulSetNode: node } = await deployWebAndDb(context);
    await expectNodeLossReach(context, node, inClusterRecovery());
    await deployControllerInCluster(context, node);
    await stopNodeAbruptly(context, node);
    await awaitControllerRecovery(context);
  },
});

// --- released by hand ---

/** kube-controller-manager's switch that turns the 6-minute forced detach off (a flag, default false). */
export const DISABLE_FORCE_DETACH_FLAG = "--disable-force-detach-on-timeout=true";

const DURATION_NOTE =
  "waits out the attach-detach controller's 6-minute forced detach (maxWaitForUnmountDuration, " +
  "upstream's constant): about 7 minutes at every profile";

/** What the three scenarios share; `run` is theirs to wrap (the detach-disabled one restarts kube-controller-manager first). */
function releaseByHandBase(options: {
  id: string;
  title: string;
  release: ReleaseByHand;
  forceDetachDisabled: boolean;
}) {
  const { release, forceDetachDisabled } = options;
  return {
    id: options.id,
    title: options.title,
    note: () => DURATION_NOTE,
    expected: (inputs: ExpectationInputs) =>
      expectedReleaseByHand({
        ...nodeLossModelInputs(inputs),
        release,
        forceDetachDisabled,
        controllerManagerLogged: inputs.controllerManagerLogged,
      }),
    workloads: nodeLossWorkloads,
    ownMilestones: [RELEASED_BY_HAND_MILESTONE, DRAIN_STARTED_MILESTONE, DRAIN_TIMED_OUT_MILESTONE],
  };
}

/** Stops the node, releases its StatefulSet pods by hand (`release`), and awaits the workloads back. */
async function stopAndReleaseByHand(
  context: ScenarioContext<"lifecycle">,
  release: ReleaseByHand,
  forceDetachDisabled: boolean,
): Promise<void> {
  const { steps, kc } = context;
  const { statefulSetNode: node } = await deployWebAndDb(context);
  await stopNodeAbruptly(context, node);
  await context.awaitMilestone("node-ready-unknown");
  if (release === "drain") {
    await uncordonAfterDrain(context, node);
    await steps.step(`kubectl drain ${node} ${DRAIN_FLAGS.join(" ")}`, async () => {
      context.mark(DRAIN_STARTED_MILESTONE);
      if (!(await drainNode(context, node, { noGrace: false, timeoutMs: DRAIN_TIMEOUT_MS }))) {
        context.mark(DRAIN_TIMED_OUT_MILESTONE);
      }
    });
    await steps.step(`kubectl drain ${node} ${DRAIN_FLAGS.join(" ")} --grace-period=0`, async () => {
      context.mark(RELEASED_BY_HAND_MILESTONE);
      await drainNode(context, node, { noGrace: true, timeoutMs: DRAIN_TIMEOUT_MS });
    });
  } else {
    await steps.step(
      `kubectl delete pod --force --grace-period=0 the StatefulSet pods on ${node}`,
      async () => {
        await awaitNodeUnschedulable(context, node);
        context.mark(RELEASED_BY_HAND_MILESTONE);
        const deleted = await forceDeletePods(context, node);
        context.progress.info(`force-deleted ${deleted.join(", ") || "nothing"}`);
      },
    );
  }
  await context.awaitMilestone("statefulset-plain:recovered");
  await context.awaitMilestone("deployment:recovered");
  if (!context.inputs.volumeAttachRequired) {
    await context.awaitMilestone("statefulset:recovered");
    return;
  }
  await context.awaitMilestone("multi-attach");
  if (forceDetachDisabled) {
    const gone = await context.awaitMilestone("statefulset:pod-gone");
    const watchUntilMs = gone.atMs + FORCED_DETACH_WAIT_MS + PAST_FORCED_DETACH_MS;
    await steps.step(
      `watch the volume stay attached ${PAST_FORCED_DETACH_MS / 1000}s past the 6-minute forced-detach point`,
      () => sleep(Math.max(0, watchUntilMs - context.sinceFaultMs()), context.signal),
    );
    await steps.step(`taint ${node} ${OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute by hand`, async () => {
      await addTaint(kc, node, { key: OUT_OF_SERVICE_TAINT, value: "nodeshutdown", effect: "NoExecute" });
    });
    steps.registerUndo(`remove the out-of-service taint from ${node}`, async () => {
      await removeTaint(kc, node, OUT_OF_SERVICE_TAINT);
    });
  }
  await context.awaitMilestone("statefulset:recovered");
}

function releaseByHandScenario(options: { id: string; title: string; release: ReleaseByHand }) {
  return defineScenario({
    ...releaseByHandBase({ ...options, forceDetachDisabled: false }),
    requires: ["lifecycle"],
    run: (context) => stopAndReleaseByHand(context, options.release, false),
  });
}

export const nodeLossForceDeleteByHand = releaseByHandScenario({
  id: "node-loss/force-delete-by-hand",
  title:
    "StatefulSet pods force-deleted by hand: the pods go at once, the volume only after the 6-minute forced detach",
  release: "force-delete",
});

export const nodeLossDrainByHand = releaseByHandScenario({
  id: "node-loss/drain-by-hand",
  title:
    "the lost node drained by hand: the drain hangs on Terminating pods until run with --grace-period=0; the volume then waits 6 minutes",
  release: "drain",
});

export const nodeLossForceDeleteDetachDisabled = defineScenario({
  ...releaseByHandBase({
    id: "node-loss/force-delete-detach-disabled",
    title:
      "force delete with --disable-force-detach-on-timeout: the volume never moves until the out-of-service taint",
    release: "force-delete",
    forceDetachDisabled: true,
  }),
  requires: ["lifecycle", "controller-manager-flags"],
  async run(context) {
    const { steps } = context;
    const controllerManager = context.cluster.capabilities["controller-manager-flags"];
    await steps.step(`restart kube-controller-manager with ${DISABLE_FORCE_DETACH_FLAG}`, () =>
      controllerManager.restartControllerManager([DISABLE_FORCE_DETACH_FLAG]),
    );
    steps.registerUndo("restart kube-controller-manager with its usual flags", () =>
      controllerManager.restartControllerManager([]),
    );
    await stopAndReleaseByHand(context, "force-delete", true);
  },
});

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [
  nodeLossBaseline,
  nodeLossManualOutOfService,
  nodeLossController,
  nodeLossControllerInCluster,
  nodeLossForceDeleteByHand,
  nodeLossDrainByHand,
  nodeLossForceDeleteDetachDisabled,
];
