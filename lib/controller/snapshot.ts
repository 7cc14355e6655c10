// One reconcile pass's view of the cluster: nodes, node Leases (with when this controller received
// each renewal), NodeFences and the pause switch, taken from the watch caches (cluster-caches.ts).
import type { k8s } from "../kube/client.js";
import type { NodeFence } from "./fence-state.js";

export interface Snapshot {
  nodes: k8s.V1Node[];
  /** Node Leases (kube-node-lease) by node name. */
  leases: Map<string, k8s.V1Lease>;
  /**
   * When this controller received each Lease's current renewTime, on its monotonic clock, by node
   * name: the start of the node's silence. Default: when the pass looked (a read, not a watch).
   */
  renewedAt?: ReadonlyMap<string, number>;
  /** NodeFences by node name (each named after its node). */
  fences: Map<string, NodeFence>;
  /** NodeFences named other than their node (made by hand): refused, never acted on. Default none. */
  misnamed?: NodeFence[];
  /** The controller's ConfigMap says `paused: "true"`. */
  paused: boolean;
}
