// One reconcile pass's view of the cluster, read in parallel: nodes, node Leases, NodeFences and
// the pause switch.
import { isNotFound, k8s } from "../kube/client.js";
import type { ControllerConfig } from "./config.js";
import type { NodeFence } from "./fence-state.js";
import type { NodeFenceStore } from "./node-fence-store.js";

export interface Snapshot {
  nodes: k8s.V1Node[];
  /** Node Leases (kube-node-lease) by node name. */
  leases: Map<string, k8s.V1Lease>;
  /** NodeFences by node name (each named after its node). */
  fences: Map<string, NodeFence>;
  /** NodeFences named other than their node (made by hand): refused, never acted on. Default none. */
  misnamed?: NodeFence[];
  /** The controller's ConfigMap says `paused: "true"`. */
  paused: boolean;
}

export async function readSnapshot(
  kc: k8s.KubeConfig,
  config: Pick<ControllerConfig, "configMapName" | "namespace">,
  store: NodeFenceStore,
): Promise<Snapshot> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const [nodes, leases, fences, paused] = await Promise.all([
    core.listNode(),
    kc.makeApiClient(k8s.CoordinationV1Api).listNamespacedLease({ namespace: "kube-node-lease" }),
    store.list(),
    core
      .readNamespacedConfigMap({ name: config.configMapName, namespace: config.namespace })
      .then((cm) => cm.data?.["paused"] === "true")
      .catch((error: unknown) => {
        if (isNotFound(error)) return false;
        throw error;
      }),
  ]);
  return {
    nodes: nodes.items,
    leases: new Map(leases.items.map((l) => [l.metadata?.name ?? "", l])),
    fences: fences.byNode,
    misnamed: fences.misnamed,
    paused,
  };
}
