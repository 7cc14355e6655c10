// A minimal CSI provisioner, shared by the sim (its CSI driver) and kind (its shared hostPath
// storage): provisions a CSI PersistentVolume for every pending claim of a StorageClass that names
// the driver, and deletes released volumes with reclaim policy Delete. (On the sim, the kubelets'
// volume managers are lib/cluster/sim/kubelet/volumes.ts.) Reconciles by listing on an interval:
// simple, and immune to watch expiry; there are few claims and volumes.
import { k8s, isConflict, isNotFound } from "./client.js";
import { sleep } from "../util/time.js";

export interface CsiProvisionerOptions {
  /** The provisioner name StorageClasses name (for the sim: its CSI driver). */
  driver: string;
  /** The PersistentVolume's source. Default: a CSI volume of `driver`. */
  volumeSource?: (claim: k8s.V1PersistentVolumeClaim) => Pick<k8s.V1PersistentVolumeSpec, "csi" | "hostPath">;
  /** Default 500 ms. */
  intervalMs?: number;
  log?: (message: string) => void;
  signal?: AbortSignal;
}

export const PROVISIONED_BY_ANNOTATION = "pv.kubernetes.io/provisioned-by";
/**
 * The mark on a sim pod whose PVC volumes its kubelet could mount (sim/kubelet/volumes.ts): KWOK's pod
 * Stage starts no container before it (deploy/sim/kwok/pod-stages.yaml).
 */
export const VOLUMES_ATTACHED_ANNOTATION = "rekindle.dev/volumes-attached";

export function persistentVolumeFor(
  claim: k8s.V1PersistentVolumeClaim,
  driver: string,
  volumeSource: CsiProvisionerOptions["volumeSource"] = (c) => ({
    csi: { driver, volumeHandle: `sim-${c.metadata?.uid ?? ""}`, fsType: "ext4" },
  }),
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
      ...volumeSource(claim),
    },
  };
}

/** A claim still waiting for a volume (pending, unbound, not being deleted). */
function awaitsVolume(claim: k8s.V1PersistentVolumeClaim): boolean {
  return claim.status?.phase === "Pending" && !claim.spec?.volumeName && !claim.metadata?.deletionTimestamp;
}

/** A volume this driver provisioned, released by its claim, to be deleted. */
function releasedOfOurs(volume: k8s.V1PersistentVolume, driver: string): boolean {
  return (
    volume.metadata?.annotations?.[PROVISIONED_BY_ANNOTATION] === driver &&
    volume.status?.phase === "Released" &&
    volume.spec?.persistentVolumeReclaimPolicy === "Delete"
  );
}

/** Creates a volume for each pending claim of this driver's `classes` that has none yet. */
async function provisionPending(
  kc: k8s.KubeConfig,
  options: CsiProvisionerOptions,
  classes: ReadonlySet<string | undefined>,
  volumes: readonly k8s.V1PersistentVolume[],
): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const log = options.log ?? (() => undefined);
  const existing = new Set(volumes.map((v) => v.metadata?.name));
  for (const claim of (await core.listPersistentVolumeClaimForAllNamespaces()).items) {
    if (!awaitsVolume(claim) || !classes.has(claim.spec?.storageClassName)) continue;
    const pv = persistentVolumeFor(claim, options.driver, options.volumeSource);
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
}

/** Deletes the released volumes of this driver whose reclaim policy is Delete. */
async function deleteReleased(
  kc: k8s.KubeConfig,
  options: CsiProvisionerOptions,
  volumes: readonly k8s.V1PersistentVolume[],
): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const log = options.log ?? (() => undefined);
  for (const volume of volumes) {
    if (!releasedOfOurs(volume, options.driver)) continue;
    try {
      await core.deletePersistentVolume({ name: volume.metadata?.name ?? "" });
      log(`deleted released ${volume.metadata?.name ?? ""}`);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}

export async function reconcileOnce(kc: k8s.KubeConfig, options: CsiProvisionerOptions): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  const classes = new Set(
    (await storage.listStorageClass()).items
      .filter((c) => c.provisioner === options.driver)
      .map((c) => c.metadata?.name),
  );
  const volumes = (await core.listPersistentVolume()).items;
  await provisionPending(kc, options, classes, volumes);
  await deleteReleased(kc, options, volumes);
}

/** Claims of a pod's PVC volumes. */
export function claimNames(pod: k8s.V1Pod): string[] {
  return (pod.spec?.volumes ?? []).flatMap((v) =>
    v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : [],
  );
}

export async function runCsiProvisioner(kc: k8s.KubeConfig, options: CsiProvisionerOptions): Promise<void> {
  const log = options.log ?? (() => undefined);
  log(`provisioner for ${options.driver} started`);
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
  log(`provisioner for ${options.driver} stopped`);
}

/** Runs the provisioner in this process, on its own abort, until the returned stop() is called. */
export function startProvisioner(
  kc: k8s.KubeConfig,
  options: Omit<CsiProvisionerOptions, "signal">,
): { stop(): Promise<void> } {
  const abort = new AbortController();
  const loop = runCsiProvisioner(kc, { ...options, signal: abort.signal });
  return {
    async stop() {
      abort.abort();
      await loop;
    },
  };
}
