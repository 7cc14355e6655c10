// The recorder's vocabulary: raw watch records and the transitions derived from them.

export type WatchedKind = "Node" | "Lease" | "Pod" | "VolumeAttachment" | "Event" | "NodeFence";

export interface ObjectRef {
  kind: WatchedKind;
  namespace?: string;
  name: string;
  uid?: string;
}

/**
 * One state change of one object, as observed. `atMs` is the local receive time (epoch ms);
 * `apiTime` is the API's own timestamp for the change when the object carries one (second
 * precision for most fields, microseconds for Lease renewTime and Event eventTime).
 */
export interface Transition {
  name: TransitionName;
  atMs: number;
  apiTime?: string;
  subject: ObjectRef;
  /** The node the change concerns (a pod's node, a VolumeAttachment's node, the node itself). */
  node?: string;
  /** Extra facts: taint key, event reason, pod owner kind, condition status… */
  detail?: Record<string, string>;
  /** "relist" when the change was reconstructed after a watch gap instead of seen live. */
  source: "watch" | "relist";
}

export type TransitionName =
  | "node-added"
  | "node-condition"
  /** node.status.volumesInUse changed (the kubelet's mounted volumes); detail.count and detail.volumes. */
  | "node-volumes-in-use"
  | "taint-added"
  | "taint-removed"
  | "lease-renewed"
  | "pod-created"
  | "pod-scheduled"
  | "pod-running"
  | "pod-ready"
  | "pod-deletion-requested"
  /** The pod reached phase Failed or Succeeded (kubelet eviction, graceful node shutdown…); detail.reason says why. */
  | "pod-terminal"
  | "pod-gone"
  | "va-created"
  | "va-attached"
  | "va-deletion-requested"
  | "va-gone"
  | "event"
  | "fence-changed";
