// StorageClasses as the workload model needs them: name, provisioner, whether the cluster uses it
// for claims that name none (the default class), and the user's own word on whether it keeps a
// volume on one node. Read from a cluster (listStorageClasses) or from a scenario's own manifests.
import { k8s } from "./client.js";

/** The annotation that makes a StorageClass the default (the beta one is still honoured upstream). */
export const DEFAULT_CLASS_ANNOTATIONS = [
  "storageclass.kubernetes.io/is-default-class",
  "storageclass.beta.kubernetes.io/is-default-class",
] as const;

/**
 * rekindle's own annotation on a StorageClass: "true" when its volumes stay on the node that
 * first used them (storage the model does not know by its provisioner), "false" when they can
 * follow a pod to another node although the provisioner is one the model takes to be node-local.
 */
export const NODE_LOCAL_ANNOTATION = "rekindle.dev/node-local";

export interface StorageClassInfo {
  name: string;
  provisioner: string;
  /** Marked default: claims with no storageClassName get it. */
  isDefault: boolean;
  /** The NODE_LOCAL_ANNOTATION, when written ("true" / "false"). */
  nodeLocal?: boolean;
}

export function storageClassInfo(sc: Pick<k8s.V1StorageClass, "metadata" | "provisioner">): StorageClassInfo {
  const annotations = sc.metadata?.annotations ?? {};
  const own = annotations[NODE_LOCAL_ANNOTATION];
  return {
    name: sc.metadata?.name ?? "",
    provisioner: sc.provisioner,
    isDefault: DEFAULT_CLASS_ANNOTATIONS.some((a) => annotations[a] === "true"),
    ...(own === "true" || own === "false" ? { nodeLocal: own === "true" } : {}),
  };
}

/**
 * Provisioners whose volumes stay on the node that first used them: Rancher's local-path (kind's
 * default StorageClass), the static local PersistentVolumes of `kubernetes.io/no-provisioner`,
 * OpenEBS LocalPV and TopoLVM. Any other class can say so with rekindle.dev/node-local: "true".
 */
export const NODE_LOCAL_PROVISIONERS: readonly string[] = [
  "rancher.io/local-path",
  "kubernetes.io/no-provisioner",
  "openebs.io/local",
  "topolvm.io",
  "topolvm.cybozu.com",
];

/**
 * Why the class keeps each volume on one node, by its own annotation, else its provisioner;
 * undefined when its volumes can follow a pod. (The workload model refines this for a
 * no-provisioner class whose volumes a scenario brings: lib/expect/workload-volume.ts.)
 */
export function nodeLocalClassWhy(info: StorageClassInfo): string | undefined {
  const label = `StorageClass ${info.name} (${info.provisioner})`;
  if (info.nodeLocal !== undefined)
    return info.nodeLocal ? `${label} is marked ${NODE_LOCAL_ANNOTATION}: "true"` : undefined;
  if (!NODE_LOCAL_PROVISIONERS.includes(info.provisioner)) return undefined;
  return info.provisioner === "kubernetes.io/no-provisioner"
    ? `${label} serves pre-made local volumes, each on one node`
    : `${label} keeps each volume on the node that first used it`;
}

/** The cluster's StorageClasses (one LIST; a cluster has a handful). */
export async function listStorageClasses(kc: k8s.KubeConfig): Promise<StorageClassInfo[]> {
  const list = await kc.makeApiClient(k8s.StorageV1Api).listStorageClass();
  return list.items.map(storageClassInfo);
}
