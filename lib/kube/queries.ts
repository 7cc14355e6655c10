// Read-only questions the harness asks the API about node loss.
import { pollUntil } from "../util/time.js";
import { isNotFound, k8s, nodeConditionStatus } from "./client.js";

export const UNREACHABLE_TAINT = "node.kubernetes.io/unreachable";
export const NOT_READY_TAINT = "node.kubernetes.io/not-ready";
export const OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service";

export async function readNode(kc: k8s.KubeConfig, name: string): Promise<k8s.V1Node> {
  return kc.makeApiClient(k8s.CoreV1Api).readNode({ name });
}

export function hasTaint(node: k8s.V1Node, key: string, effect?: string): boolean {
  return (
    node.spec?.taints?.some((t) => t.key === key && (effect === undefined || t.effect === effect)) ?? false
  );
}

/** The well-known label of a node's failure zone. */
export const ZONE_LABEL = "topology.kubernetes.io/zone";
/** The label kubeadm (and kind) put on control-plane nodes. */
export const CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane";

/**
 * Role labels that mark a node of the control plane or of its etcd, whatever their value:
 * kubeadm's current one; "master", which kubeadm set before 1.24 and OpenShift, k3s and RKE2 still
 * set; RKE1's "controlplane" and "etcd" (RKE2 and k3s put "etcd" on etcd-only servers too).
 */
export const CONTROL_PLANE_ROLE_LABELS = [
  CONTROL_PLANE_LABEL,
  "node-role.kubernetes.io/master",
  "node-role.kubernetes.io/controlplane",
  "node-role.kubernetes.io/etcd",
] as const;

/** The pre-1.16 role label (kops, old clusters): `kubernetes.io/role=master`. */
export const LEGACY_ROLE_LABEL = "kubernetes.io/role";

/**
 * A node of the control plane (or an etcd member): never fenced by the controller and never
 * disturbed by a scenario. A role label marks it whatever its value, as kubectl's ROLES column reads it.
 */
export function isControlPlaneNode(node: k8s.V1Node): boolean {
  const labels = node.metadata?.labels ?? {};
  return (
    CONTROL_PLANE_ROLE_LABELS.some((label) => labels[label] !== undefined) ||
    labels[LEGACY_ROLE_LABEL] === "master"
  );
}

/** Every pod bound to the node, in all namespaces. */
export async function podsOnNode(kc: k8s.KubeConfig, node: string): Promise<k8s.V1Pod[]> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items;
}

/** How many pods are bound to any of `nodes`: one LIST of every pod, not one per node. */
export async function podCountOn(kc: k8s.KubeConfig, nodes: readonly string[]): Promise<number> {
  const wanted = new Set(nodes);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const pods = (await core.listPodForAllNamespaces()).items;
  return pods.filter((p) => wanted.has(p.spec?.nodeName ?? "")).length;
}

export async function volumeAttachmentsOnNode(
  kc: k8s.KubeConfig,
  node: string,
): Promise<k8s.V1VolumeAttachment[]> {
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  return (await storage.listVolumeAttachment()).items.filter((va) => va.spec.nodeName === node);
}

export async function volumeAttachmentsFor(
  kc: k8s.KubeConfig,
  volumeName: string,
): Promise<k8s.V1VolumeAttachment[]> {
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  return (await storage.listVolumeAttachment()).items.filter(
    (va) => va.spec.source.persistentVolumeName === volumeName,
  );
}

export interface NodeBackOptions {
  /** The Lease must have been renewed within this long (one renewal interval plus a margin). */
  freshWithinMs: number;
  /** Default 180 000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Waits until the node is back: Ready=True and its Lease freshly renewed. Ready alone may still
 * read True right after a short outage, before the node lifecycle controller noticed it.
 */
export async function waitForNodeBack(
  kc: k8s.KubeConfig,
  node: string,
  options: NodeBackOptions,
): Promise<void> {
  const leases = kc.makeApiClient(k8s.CoordinationV1Api);
  // A renewal seen while polling counts as fresh too: a node whose clock is off writes a renewTime
  // this machine's clock would call old (or new) whatever its age.
  let firstRenewTime: string | undefined;
  await pollUntil(
    async () => {
      try {
        const ready = nodeConditionStatus(await readNode(kc, node), "Ready") === "True";
        const lease = await leases.readNamespacedLease({ name: node, namespace: "kube-node-lease" });
        const renewTime = lease.spec?.renewTime ? new Date(lease.spec.renewTime).toISOString() : undefined;
        firstRenewTime ??= renewTime;
        const renewed = renewTime ? Date.parse(renewTime) : 0;
        const fresh = Date.now() - renewed < options.freshWithinMs || renewTime !== firstRenewTime;
        return ready && fresh ? true : undefined;
      } catch (error) {
        // Registered again, or its agent not up yet: the Node or its Lease is still to come.
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    {
      what: `${node} back (Ready, Lease fresh)`,
      timeoutMs: options.timeoutMs ?? 180_000,
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
}
