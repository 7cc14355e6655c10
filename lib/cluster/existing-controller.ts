// The recovery controller on a cluster rekindle did not create, with the user's --fence-config
// (existing-fencing.ts): the in-process controller's fencing, the controller deployed from
// fixtures/controller/ with the user's image, and node faults whose revert powers a fenced node on
// first (the agent that reverts them runs on it).
import { shippedControllerSettings } from "../controller/shipped-deployment.js";
import { errorMessage } from "../errors.js";
import { isNotFound, k8s } from "../kube/client.js";
import { silentProgress, type Progress } from "../util/progress.js";
import type { ExistingFencing } from "./existing-fencing.js";
import {
  applyControllerDeployment,
  claimControllerNamespace,
  CONTROLLER_NAMESPACE,
  releaseControllerNamespace,
} from "./in-cluster-controller.js";
import type { CapabilityMap, DeployedController, ExistingNodeFaults } from "./provider.js";

export interface ExistingControllerOptions {
  kc: k8s.KubeConfig;
  runId: string;
  fencing: ExistingFencing;
  /** --controller-image: what the nodes run. Default: the image fixtures/controller/deployment.yaml names. */
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
 * The faults with each revert preceded by a power-on when the node's fence driver reports it off:
 * the controller may have fenced it, and the agent that reverts the fault runs on it. A node whose
 * power state cannot be read is left to the agent as it is (said, not switched blindly).
 */
export function revertsPowerOnFirst(
  faults: ExistingNodeFaults,
  fencing: ExistingFencing,
  kc: k8s.KubeConfig,
  progress: Progress = silentProgress,
): ExistingNodeFaults {
  const powered = async (node: string) => {
    const before = await renewTime(kc, node);
    try {
      const outcome = await fencing.poweredOn(node, async () => (await renewTime(kc, node)) !== before);
      if (outcome === "powered-on")
        progress.info(`${node} was powered off (fenced): powered it on through ${fencing.path}`);
    } catch (error) {
      progress.info(
        `${node}: power state not read through ${fencing.path} (${errorMessage(error)}); reverting through its agent as it is`,
      );
    }
  };
  const { lifecycle, partition, pressure } = faults;
  return {
    ...faults,
    lifecycle: {
      stopNode: (n, o) => lifecycle.stopNode(n, o),
      startNode: async (n) => (await powered(n), lifecycle.startNode(n)),
    },
    partition: {
      partitionNode: (n, o) => partition.partitionNode(n, o),
      healNode: async (n) => (await powered(n), partition.healNode(n)),
    },
    pressure: {
      applyPressure: (n, kind, o) => pressure.applyPressure(n, kind, o),
      relievePressure: async (n, kind) => (await powered(n), pressure.relievePressure(n, kind)),
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
          `deploying the recovery controller (fixtures/controller/, image ${image}, --node-selector "${fencing.nodeSelector}", fencing from ${fencing.path})`,
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
