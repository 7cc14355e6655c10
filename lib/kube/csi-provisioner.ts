// A minimal CSI provisioner, shared by the sim (its CSI driver) and kind (its shared hostPath
// storage): provisions a CSI PersistentVolume for every pending claim of a StorageClass
// that names the driver, deletes released volumes with reclaim policy Delete, and plays the
// kubelet's volume manager by marking a pending pod once all its claims' VolumeAttachments on its
// node are attached (the kwok pod-start Stage waits for that mark); a claim bound to a volume with
// no attach step (not this driver's: a local or hostPath PersistentVolume) is mounted at once.
// Reconciles by listing on an interval: simple, and immune to watch expiry.
import { k8s, isConflict, isNotFound } from "./client.js";
import { sleep } from "../util/time.js";

export interface CsiProvisionerOptions {
  /** The provisioner name StorageClasses name (for the sim: its CSI driver). */
  driver: string;
  /** The PersistentVolume's source. Default: a CSI volume of `driver`. */
  volumeSource?: (claim: k8s.V1PersistentVolumeClaim) => Pick<k8s.V1PersistentVolumeSpec, "csi" | "hostPath">;
  /** Play the kubelet's volume manager for attachable volumes (the sim's kwok nodes). Default true. */
  markAttached?: boolean;
  /** Default 500 ms. */
  intervalMs?: number;
  log?: (message: string) => void;
  signal?: AbortSignal;
}

export const PROVISIONED_BY_ANNOTATION = "pv.kubernetes.io/provisioned-by";
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

/**
 * Marks pending pods whose PVC volumes are all bound and, where this driver attaches them,
 * attached to their node. Other volumes (local, hostPath…) have no attach step: bound is enough.
 */
export async function markAttachedPods(kc: k8s.KubeConfig, options: CsiProvisionerOptions): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  const log = options.log ?? (() => undefined);
  const pods = (await core.listPodForAllNamespaces({ fieldSelector: "status.phase=Pending" })).items.filter(
    (p) =>
      p.spec?.nodeName &&
      !p.metadata?.deletionTimestamp &&
      claimNames(p).length > 0 &&
      p.metadata?.annotations?.[VOLUMES_ATTACHED_ANNOTATION] !== "true",
  );
  if (pods.length === 0) return;
  const attached = new Set(
    (await storage.listVolumeAttachment()).items
      .filter(
        (va) =>
          va.spec.attacher === options.driver &&
          va.status?.attached === true &&
          !va.metadata?.deletionTimestamp,
      )
      .map((va) => `${va.spec.source.persistentVolumeName ?? ""}@${va.spec.nodeName}`),
  );
  const claims = await core.listPersistentVolumeClaimForAllNamespaces();
  const volumeOf = new Map(
    claims.items.map((c) => [
      `${c.metadata?.namespace ?? ""}/${c.metadata?.name ?? ""}`,
      c.spec?.volumeName ?? "",
    ]),
  );
  // Listed after the claims: every volume a claim names is in it (a claim binds an existing volume).
  const attachable = new Set(
    (await core.listPersistentVolume()).items
      .filter((v) => v.spec?.csi?.driver === options.driver)
      .map((v) => v.metadata?.name ?? ""),
  );
  for (const pod of pods) {
    const namespace = pod.metadata?.namespace ?? "";
    const ready = claimNames(pod).every((claim) => {
      const volume = volumeOf.get(`${namespace}/${claim}`) ?? "";
      if (volume === "") return false;
      return !attachable.has(volume) || attached.has(`${volume}@${pod.spec?.nodeName ?? ""}`);
    });
    if (!ready) continue;
    try {
      await core.patchNamespacedPod(
        {
          name: pod.metadata?.name ?? "",
          namespace,
          body: { metadata: { annotations: { [VOLUMES_ATTACHED_ANNOTATION]: "true" } } },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      log(`volumes attached for ${namespace}/${pod.metadata?.name ?? ""} on ${pod.spec?.nodeName ?? ""}`);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}

export async function runCsiProvisioner(kc: k8s.KubeConfig, options: CsiProvisionerOptions): Promise<void> {
  const log = options.log ?? (() => undefined);
  log(`provisioner for ${options.driver} started`);
  while (!options.signal?.aborted) {
    try {
      await reconcileOnce(kc, options);
      if (options.markAttached !== false) await markAttachedPods(kc, options);
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
