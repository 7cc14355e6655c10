// The sim CSI driver's controller side: provisions a CSI PersistentVolume for every pending claim
// of a StorageClass that names the driver, and deletes released volumes with reclaim policy Delete.
// Reconciles by listing on an interval: simple, and immune to watch expiry.
import { k8s, isConflict, isNotFound } from "../../kube/client.js";
import { sleep } from "../../util/time.js";

export interface CsiProvisionerOptions {
  driver: string;
  /** Default 500 ms. */
  intervalMs?: number;
  log?: (message: string) => void;
  signal?: AbortSignal;
}

export const PROVISIONED_BY_ANNOTATION = "pv.kubernetes.io/provisioned-by";

export function persistentVolumeFor(
  claim: k8s.V1PersistentVolumeClaim,
  driver: string,
): k8s.V1PersistentVolume {
  const uid = claim.metadata?.uid ?? "";
  const storage = claim.spec?.resources?.requests?.["storage"] ?? "1Gi";
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name: `pvc-${uid}`, annotations: { [PROVISIONED_BY_ANNOTATION]: driver } },
    spec: {
      capacity: { storage },
      accessModes: claim.spec?.accessModes ?? ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Delete",
      storageClassName: claim.spec?.storageClassName ?? "",
      volumeMode: claim.spec?.volumeMode ?? "Filesystem",
      claimRef: {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        namespace: claim.metadata?.namespace ?? "",
        name: claim.metadata?.name ?? "",
        uid,
      },
      csi: { driver, volumeHandle: `sim-${uid}`, fsType: "ext4" },
    },
  };
}

export async function reconcileOnce(kc: k8s.KubeConfig, options: CsiProvisionerOptions): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  const log = options.log ?? (() => undefined);
  const classes = new Set(
    (await storage.listStorageClass()).items
      .filter((c) => c.provisioner === options.driver)
      .map((c) => c.metadata?.name),
  );
  const volumes = await core.listPersistentVolume();
  const existing = new Set(volumes.items.map((v) => v.metadata?.name));
  for (const claim of (await core.listPersistentVolumeClaimForAllNamespaces()).items) {
    if (claim.status?.phase !== "Pending" || claim.spec?.volumeName || claim.metadata?.deletionTimestamp)
      continue;
    if (!classes.has(claim.spec?.storageClassName)) continue;
    const pv = persistentVolumeFor(claim, options.driver);
    if (existing.has(pv.metadata?.name)) continue;
    try {
      await core.createPersistentVolume({ body: pv });
      log(
        `provisioned ${pv.metadata?.name ?? ""} for ${claim.metadata?.namespace ?? ""}/${claim.metadata?.name ?? ""}`,
      );
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }
  for (const volume of volumes.items) {
    const ours = volume.metadata?.annotations?.[PROVISIONED_BY_ANNOTATION] === options.driver;
    if (
      !ours ||
      volume.status?.phase !== "Released" ||
      volume.spec?.persistentVolumeReclaimPolicy !== "Delete"
    )
      continue;
    try {
      await core.deletePersistentVolume({ name: volume.metadata?.name ?? "" });
      log(`deleted released ${volume.metadata?.name ?? ""}`);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}

export async function runCsiProvisioner(kc: k8s.KubeConfig, options: CsiProvisionerOptions): Promise<void> {
  const log = options.log ?? (() => undefined);
  log(`sim CSI provisioner for ${options.driver} started`);
  while (!options.signal?.aborted) {
    try {
      await reconcileOnce(kc, options);
    } catch (error) {
      log(`reconcile failed (will retry): ${error instanceof Error ? error.message : String(error)}`);
    }
    try {
      await sleep(options.intervalMs ?? 500, options.signal);
    } catch {
      break;
    }
  }
  log("sim CSI provisioner stopped");
}
