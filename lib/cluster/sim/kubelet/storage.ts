// The sim's storage: a CSI driver that requires attach, its StorageClass (deploy/sim/storage.yaml),
// and the two helper processes that play the CSI side: a provisioner and a kwok "attacher".
import { join } from "node:path";
import { applyManifestFile, RUN_LABEL } from "../../../kube/apply.js";
import type { k8s } from "../../../kube/client.js";
import type { DaemonSpec } from "../../../util/daemon.js";
import { deployPath, nodeEntryCommand } from "../../../util/project-files.js";
import type { SimLayout } from "../boot/layout.js";
import { restartedLikeSystemd } from "../boot/supervised.js";

/** The CSI driver the sim storage plays. */
export const SIM_CSI_DRIVER = "sim.csi.rekindle.dev";
/** The StorageClass of deploy/sim/storage.yaml (the cluster's default). */
export const SIM_STORAGE_CLASS = "rekindle-sim";
/** A node name no Node ever has: the attacher kwok process manages nothing but VolumeAttachments. */
const ATTACHER_NODE_SELECTOR = "rekindle-attacher-manages-no-node";

export async function applySimStorage(kc: k8s.KubeConfig, runId: string): Promise<void> {
  await applyManifestFile(kc, deployPath("sim", "storage.yaml"), {
    labels: { [RUN_LABEL]: runId },
    substitutions: { CSI_DRIVER: SIM_CSI_DRIVER },
  });
}

/**
 * The sim CSI process (csi-main.ts): creates CSI PersistentVolumes for claims of the sim
 * StorageClass, and plays the kubelets' volume managers, which write node status every
 * `statusIntervalMs` (the profile's sim kubelet nodeStatusUpdateFrequency).
 */
export function csiProvisionerSpec(layout: SimLayout, statusIntervalMs: number): DaemonSpec {
  const csi = nodeEntryCommand(import.meta.url, "./csi-main");
  return {
    name: "sim-csi",
    command: csi.command,
    args: [
      ...csi.args,
      `--kubeconfig=${layout.componentKubeconfig("sim-csi")}`,
      `--driver=${SIM_CSI_DRIVER}`,
      `--state=${layout.stateFile}`,
      `--status-interval-ms=${statusIntervalMs}`,
    ],
    logPath: join(layout.logsDir, "sim-csi.log"),
  };
}

/** A kwok process whose Stage plays the external attacher (sets VolumeAttachment.status.attached). */
export function attacherSpec(layout: SimLayout, kwokBinary: string, stagesFile: string): DaemonSpec {
  return restartedLikeSystemd({
    name: "kwok-attacher",
    command: kwokBinary,
    args: [
      `--kubeconfig=${layout.componentKubeconfig("kwok")}`,
      `--manage-single-node=${ATTACHER_NODE_SELECTOR}`,
      `--config=${stagesFile}`,
    ],
    env: { KWOK_WORKDIR: join(layout.kwokDir, "attacher") },
    logPath: join(layout.logsDir, "kwok-attacher.log"),
  });
}
