// A workload's volume as the timeline model sees it: what must happen before its pod can run on
// another node, if it ever can. Read from its claims, the StorageClasses and PersistentVolumes of
// its own manifests, and the cluster's StorageClasses (passed in: this file reads no cluster).
import type { k8s } from "../kube/client.js";
import { NODE_LOCAL_PROVISIONERS, storageClassInfo, type StorageClassInfo } from "../kube/storage-classes.js";

/**
 * - "node-local": a claim on storage that lives on one node (local-path, local PersistentVolumes):
 *   its pod can run nowhere else, so a pod lost with its node comes back only when the node does;
 * - "rwo-attach": a ReadWriteOnce(Pod) claim on storage with an attach step (a VolumeAttachment
 *   that must be detached from the lost node first);
 * - "rwx": only ReadWriteMany / ReadOnlyMany claims (nothing to detach first);
 * - "none": no claim, or RWO on storage with no attach step (options.volumeAttachRequired false,
 *   e.g. the kind provider's shared hostPath volumes): the replacement mounts it once scheduled.
 */
export type VolumeKind = "node-local" | "rwo-attach" | "rwx" | "none";

export { NODE_LOCAL_PROVISIONERS };
const NO_PROVISIONER = "kubernetes.io/no-provisioner";

export interface WorkloadVolume {
  kind: VolumeKind;
  /** "node-local": what keeps it on one node, in words (for the windows' reasons). */
  nodeLocalWhy?: string;
}

export interface VolumeOptions {
  /** The provider's storage attaches RWO volumes to nodes (see WorkloadFactsOptions). */
  attach: boolean;
  /** The cluster's StorageClasses; the manifests' own come first. */
  clusterClasses: readonly StorageClassInfo[];
}

/** A claim its pods mount: its spec, or undefined for a claim not in the set (assumed RWO, default class). */
type ClaimSpec = k8s.V1PersistentVolumeClaimSpec | undefined;

/** Every claim a pod of the template mounts, with the StatefulSet's claim templates. */
export function workloadClaims(
  template: k8s.V1PodTemplateSpec,
  claimTemplates: readonly k8s.V1PersistentVolumeClaim[],
  objects: readonly k8s.KubernetesObject[],
): ClaimSpec[] {
  const claims = objects.filter((o) => o.kind === "PersistentVolumeClaim") as k8s.V1PersistentVolumeClaim[];
  const out: ClaimSpec[] = claimTemplates.map((t) => t.spec ?? {});
  for (const v of template.spec?.volumes ?? []) {
    if (v.ephemeral?.volumeClaimTemplate) out.push(v.ephemeral.volumeClaimTemplate.spec);
    const name = v.persistentVolumeClaim?.claimName;
    if (name !== undefined) out.push(claims.find((c) => c.metadata?.name === name)?.spec);
  }
  return out;
}

/** A PersistentVolume only one node can mount: a local volume, or one whose node affinity names a host. */
function nodeBoundVolume(pv: k8s.V1PersistentVolume): string | undefined {
  const name = pv.metadata?.name ?? "?";
  if (pv.spec?.local !== undefined)
    return `PersistentVolume ${name} is a local volume (spec.local) on one node`;
  const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  const byHost = terms.some((t) =>
    (t.matchExpressions ?? []).some((e) => e.key === "kubernetes.io/hostname" && e.operator === "In"),
  );
  return byHost ? `PersistentVolume ${name} is pinned to a node by its node affinity` : undefined;
}

interface Storage {
  classes: readonly StorageClassInfo[];
  volumes: readonly k8s.V1PersistentVolume[];
}

/** The claim's class: its own, else (unset) the default class, the manifests' before the cluster's. */
function classOf(
  spec: ClaimSpec,
  storage: Storage,
): { name: string; info?: StorageClassInfo; isDefault: boolean } | undefined {
  const named = spec?.storageClassName;
  if (named === undefined) {
    const info = storage.classes.find((c) => c.isDefault);
    return info === undefined ? undefined : { name: info.name, info, isDefault: true };
  }
  const info = storage.classes.find((c) => c.name === named);
  return { name: named, ...(info ? { info } : {}), isDefault: false };
}

/** Why the claim's volume stays on one node, or undefined when it can follow the pod. */
function nodeLocalClaim(spec: ClaimSpec, storage: Storage): string | undefined {
  const bound = spec?.volumeName;
  if (bound !== undefined && bound !== "") {
    const pv = storage.volumes.find((v) => v.metadata?.name === bound);
    return pv === undefined ? undefined : nodeBoundVolume(pv);
  }
  const cls = classOf(spec, storage);
  if (cls === undefined) return undefined;
  // Static volumes of the class in the manifests: the claim binds one of them.
  const ofClass = storage.volumes.filter((v) => (v.spec?.storageClassName ?? "") === cls.name);
  const boundWhys = ofClass.map(nodeBoundVolume);
  const info = cls.info;
  const label = `StorageClass ${cls.name}${info ? ` (${info.provisioner}${cls.isDefault ? ", the default class" : ""})` : ""}`;
  if (info?.nodeLocal !== undefined)
    return info.nodeLocal ? `${label} is marked rekindle.dev/node-local: "true"` : undefined;
  if (ofClass.length > 0 && boundWhys.every((w) => w !== undefined)) return `${label}: ${boundWhys[0] ?? ""}`;
  if (info === undefined || !NODE_LOCAL_PROVISIONERS.includes(info.provisioner)) return undefined;
  // A no-provisioner class may serve network volumes too; the manifests' own volumes tell.
  if (info.provisioner === NO_PROVISIONER && ofClass.length > 0) return undefined;
  return info.provisioner === NO_PROVISIONER
    ? `${label} serves pre-made local volumes, each on one node`
    : `${label} keeps each volume on the node that first used it`;
}

/**
 * The volume rule: a claim on node-local storage makes it "node-local"; else any ReadWriteOnce(Pod)
 * claim, or a claim not in the set (assumed RWO, the common default), makes it "rwo-attach" when
 * the storage attaches, else "none"; otherwise "rwx" when it has a claim at all, else "none".
 */
export function workloadVolume(
  claims: readonly ClaimSpec[],
  objects: readonly k8s.KubernetesObject[],
  options: VolumeOptions,
): WorkloadVolume {
  if (claims.length === 0) return { kind: "none" };
  const own = (objects.filter((o) => o.kind === "StorageClass") as k8s.V1StorageClass[]).map(
    storageClassInfo,
  );
  const storage: Storage = {
    classes: [...own, ...options.clusterClasses],
    volumes: objects.filter((o): o is k8s.V1PersistentVolume => o.kind === "PersistentVolume"),
  };
  for (const claim of claims) {
    const why = nodeLocalClaim(claim, storage);
    if (why !== undefined) return { kind: "node-local", nodeLocalWhy: why };
  }
  const rwo = claims.some((c) => {
    const modes = c?.accessModes ?? [];
    return c === undefined || modes.includes("ReadWriteOnce") || modes.includes("ReadWriteOncePod");
  });
  if (rwo) return { kind: options.attach ? "rwo-attach" : "none" };
  return { kind: "rwx" };
}
