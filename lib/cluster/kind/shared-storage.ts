// Storage that can follow a pod to another kind node. kind's default class (local-path) pins a
// volume to the node that first used it, so a StatefulSet pod with a volume could never move
// after node loss. kind-config.yaml mounts one host directory into every worker; this StorageClass
// hands out hostPath volumes under it, with no node affinity and nothing to attach. (Safe only
// because the fence, not the storage, keeps two writers apart: exactly what the suites test.)
import { startProvisioner } from "../../kube/csi-provisioner.js";
import { isConflict, k8s } from "../../kube/client.js";

export { SHARED_STORAGE_CLASS } from "./storage-classes.js";
import { SHARED_STORAGE_CLASS } from "./storage-classes.js";
export const SHARED_PROVISIONER = "rekindle.dev/shared-hostpath";
/** The directory kind-config.yaml's extraMounts puts in every worker (one host directory). */
export const SHARED_NODE_DIR = "/var/rekindle-shared";

export function sharedVolumeSource(
  claim: k8s.V1PersistentVolumeClaim,
): Pick<k8s.V1PersistentVolumeSpec, "hostPath"> {
  return {
    hostPath: { path: `${SHARED_NODE_DIR}/pvc-${claim.metadata?.uid ?? ""}`, type: "DirectoryOrCreate" },
  };
}

export async function installSharedStorageClass(kc: k8s.KubeConfig): Promise<void> {
  try {
    await kc.makeApiClient(k8s.StorageV1Api).createStorageClass({
      body: {
        metadata: { name: SHARED_STORAGE_CLASS, labels: { "app.kubernetes.io/managed-by": "rekindle" } },
        provisioner: SHARED_PROVISIONER,
        reclaimPolicy: "Delete",
        volumeBindingMode: "Immediate",
      },
    });
  } catch (error) {
    if (!isConflict(error)) throw error;
  }
}

/** Runs the provisioner in this process until the returned stop() is called. */
export function startSharedProvisioner(
  kc: k8s.KubeConfig,
  log: (message: string) => void = () => undefined,
): { stop(): Promise<void> } {
  return startProvisioner(kc, {
    driver: SHARED_PROVISIONER,
    volumeSource: sharedVolumeSource,
    intervalMs: 1_000,
    log,
  });
}
