// The recovery controller on a cluster rekindle did not create, with the user's --fence-config
// (fencing.ts): the in-process controller's fencing, the controller deployed from
// deploy/controller/ with the user's image, and node faults whose revert powers a fenced node on
// first (the agent that reverts them runs on it).
import { shippedControllerSettings } from "../../controller/shipped-deployment.js";
import { errorMessage } from "../../errors.js";
import { isNotFound, k8s } from "../../kube/client.js";
import { silentProgress, type Progress } from "../../util/progress.js";
import type { ExistingFencing } from "./fencing.js";
import {
  applyControllerDeployment,
  claimControllerNamespace,
  CONTROLLER_NAMESPACE,
  releaseControllerNamespace,
} from "../in-cluster-controller.js";
import type { CapabilityMap, DeployedController, ExistingNodeFaults } from "../provider.js";

export interface ExistingControllerOptions {
  kc: k8s.KubeConfig;
  runId: string;
  fencing: ExistingFencing;
  /** --controller-image: what the nodes run. Default: the image deploy/controller/deployment.yaml names. */
  image?: string;
  progress?: Progress;
}

/** The node's Lease renewTime now ("" when it has none). */
async function renewTime(kc: k8s.KubeConfig, node: string): Promise<string> {
  try {
    const lease = await kc
      .makeApiClient(k8s.CoordinationV1Api)
      .readNamespacedLease({ name: node, namespace: "kube-node-lease" });
    return lease.spec?.renewTime ? new Date(lease.spec.renewTime).toISOString() : "";
  } catch (error) {
    if (isNotFound(error)) return "";
    throw error;
  }
}

/**
 * The faults as they behave once the controller may have fenced a node (powered it off through
 * the user's driver), since the agent that reverts them runs on that node:
 * - starting a node powers it on first when its driver reports it off, waits for its Lease, says
 *   it runs (onRunning), then has its agent revert the stop and whatever was deferred;
 * - healing or relieving a node that is off is deferred to its start: the power-off ended the
 *   partition or the fill with everything else, and its agent reverts its own bookkeeping then
 *   (or at the fault's deadline, if nobody starts the node).
 * A node whose power state cannot be read is taken as on (said, never switched blindly).
 */
export function revertsPowerOnFirst(
  faults: ExistingNodeFaults,
  fencing: ExistingFencing,
  kc: k8s.KubeConfig,
  progress: Progress = silentProgress,
): ExistingNodeFaults {
  const deferred = new Map<string, (() => Promise<void>)[]>();
  const poweredOff = async (node: string) => {
    try {
      return (await fencing.driver.powerState({ node, options: {}, credentials: {} })) === "off";
    } catch (error) {
      progress.info(
        `${node}: power state not read through ${fencing.path} (${errorMessage(error)}); taken as on`,
      );
      return false;
    }
  };
  const unlessOff = async (node: string, what: string, revert: () => Promise<void>) => {
    if (!(await poweredOff(node))) return revert();
    progress.info(`${node} is powered off (fenced): ${what} once it runs again`);
    deferred.set(node, [...(deferred.get(node) ?? []), revert]);
  };
  const { lifecycle, partition, pressure } = faults;
  return {
    ...faults,
    lifecycle: {
      stopNode: (n, o) => lifecycle.stopNode(n, o),
      startNode: async (n, options) => {
        if (await poweredOff(n)) {
          const before = await renewTime(kc, n);
          await fencing.poweredOn(n, async () => (await renewTime(kc, n)) !== before);
          progress.info(`${n} was powered off (fenced): powered on through ${fencing.path}, renewing again`);
        }
        options?.onRunning?.();
        await lifecycle.startNode(n);
        const pending = deferred.get(n) ?? [];
        deferred.delete(n);
        for (const revert of pending) await revert();
      },
    },
    partition: {
      partitionNode: (n, o) => partition.partitionNode(n, o),
      healNode: (n) => unlessOff(n, "its agent heals the partition", () => partition.healNode(n)),
    },
    pressure: {
      applyPressure: (n, kind, o) => pressure.applyPressure(n, kind, o),
      relievePressure: (n, kind) =>
        unlessOff(n, `its agent relieves ${kind} pressure`, () => pressure.relievePressure(n, kind)),
    },
  };
}

/** fencing (the in-process controller) and in-cluster-controller, both walled to the rails. */
export function existingControllerCapabilities(
  options: ExistingControllerOptions,
): Pick<CapabilityMap, "fencing" | "in-cluster-controller"> {
  const { kc, fencing, runId } = options;
  const progress = options.progress ?? silentProgress;
  const shipped = shippedControllerSettings();
  const image = options.image ?? shipped.image;
  return {
    fencing: { fenceDriver: () => fencing.driver, nodeSelector: fencing.nodeSelector },
    "in-cluster-controller": {
      async deployController(signal?: AbortSignal): Promise<DeployedController> {
        await claimControllerNamespace(kc, runId);
        let userObjects;
        try {
          userObjects = await fencing.userObjects();
        } catch (error) {
          await releaseControllerNamespace(kc).catch(() => undefined);
          throw error;
        }
        progress.info(
          `deploying the recovery controller (deploy/controller/, image ${image}, --node-selector "${fencing.nodeSelector}", fencing from ${fencing.path})`,
        );
        const applied = await applyControllerDeployment({
          kc,
          userObjects,
          image,
          extraArgs: ["--node-selector", fencing.nodeSelector],
          progress,
          ...(signal ? { signal } : {}),
        });
        return { image, namespace: CONTROLLER_NAMESPACE, ...applied };
      },
    },
  };
}
