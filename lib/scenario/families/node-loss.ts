// Node loss: a worker stops abruptly under a Deployment, a StatefulSet and a StatefulSet with an
// RWO volume. baseline: nothing helps (the StatefulSets stay down, by design);
// manual-out-of-service: an operator applies node.kubernetes.io/out-of-service after the loss;
// controller: the bundled recovery controller fences the node and releases its workloads.
import { expectedNodeLoss, POD_GC_PERIOD_MS, type RecoveryMode } from "../../expect/model.js";
import { OUT_OF_SERVICE_TAINT } from "../../kube/queries.js";
import { addTaint, removeTaint } from "../../kube/taints.js";
import type { WorkloadRef } from "../../observe/milestones.js";
import { sleep } from "../../util/time.js";
import { DEPLOYMENT_NAME, PLAIN_STATEFULSET_NAME, STATEFULSET_NAME } from "../../workloads/deploy.js";
import type { ScenarioDefinition } from "../harness.js";
import { deployWebAndDb, expectedControllerRecovery, nodeLossModelInputs, takeNodeDown } from "./common.js";

export type NodeLossMode = RecoveryMode | "controller";

export const NODE_LOSS_TITLES: Readonly<Record<NodeLossMode, string>> = {
  baseline: "baseline: Deployment recovers after the toleration, the StatefulSet with a volume never does",
  "manual-out-of-service": "out-of-service taint by hand: PodGC frees the StatefulSet pod, its volume moves",
  controller:
    "recovery controller: fence, out-of-service taint, force delete; everything back well within a minute",
};

/** How long the baseline watches the StatefulSets stay stuck: 3 PodGC periods. */
const OBSERVE_STUCK_MS = 3 * POD_GC_PERIOD_MS;

export function nodeLossWorkloads(namespace: string): WorkloadRef[] {
  return [
    { id: "deployment", app: DEPLOYMENT_NAME, namespace },
    { id: "statefulset", app: STATEFULSET_NAME, namespace },
    { id: "statefulset-plain", app: PLAIN_STATEFULSET_NAME, namespace },
  ];
}

function nodeLossScenario(mode: NodeLossMode): ScenarioDefinition {
  return {
    id: `node-loss/${mode}`,
    title: NODE_LOSS_TITLES[mode],
    requires: ["lifecycle"],
    usesController: mode === "controller",
    expected: (inputs) =>
      mode === "controller"
        ? expectedControllerRecovery(inputs)
        : expectedNodeLoss({ ...nodeLossModelInputs(inputs), mode }),
    workloads: nodeLossWorkloads,
    async run(context) {
      const { steps, kc } = context;
      const { statefulSetNode: node } = await deployWebAndDb(context);
      if (mode === "controller") await context.startController();
      await takeNodeDown(context, node, "stop");
      if (mode === "controller") {
        // Recovery is the controller's; nothing to do by hand.
        await context.awaitMilestone("statefulset:recovered");
        await context.awaitMilestone("statefulset-plain:recovered");
        await context.awaitMilestone("deployment:recovered");
        return;
      }
      await context.awaitMilestone("node-ready-unknown");
      await context.awaitMilestone("deployment:recovered");
      await context.awaitMilestone("statefulset:pod-deletion-requested");
      await context.awaitMilestone("statefulset-plain:pod-deletion-requested");
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
      await context.awaitMilestone("statefulset:recovered");
      await context.awaitMilestone("statefulset-plain:recovered");
    },
  };
}

export const nodeLossBaseline = nodeLossScenario("baseline");
export const nodeLossManualOutOfService = nodeLossScenario("manual-out-of-service");
export const nodeLossController = nodeLossScenario("controller");
