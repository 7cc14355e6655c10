// The recorder's vocabulary: raw watch records and the transitions derived from them.

export type WatchedKind =
  | "Node"
  | "Lease"
  | "Pod"
  | "PersistentVolumeClaim"
  | "VolumeAttachment"
  | "EndpointSlice"
  | "Event"
  | "NodeFence";

export interface ObjectRef {
  kind: WatchedKind;
  namespace?: string;
  name: string;
  uid?: string;
}

/** What every pod transition carries of its pod: what workload matching and volume tracing read. */
export interface PodFacts {
  labels: Readonly<Record<string, string>>;
  /** The PersistentVolumeClaims its volumes use (a generic ephemeral volume's claim included). */
  claims: readonly string[];
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
  /** Pod transitions: the pod's labels and claims. */
  pod?: PodFacts;
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
  /** Ready went from True to anything else while the pod exists (e.g. its node was lost). */
  | "pod-unready"
  | "pod-deletion-requested"
  /** The pod reached phase Failed or Succeeded (kubelet eviction, graceful node shutdown…); detail.reason says why. */
  | "pod-terminal"
  | "pod-gone"
  /** A PersistentVolumeClaim bound (spec.volumeName set): detail.claim and detail.volume (the PV). */
  | "pvc-bound"
  | "va-created"
  | "va-attached"
  | "va-deletion-requested"
  | "va-gone"
  /**
   * An EndpointSlice's ready endpoints changed (added, updated, deleted: deleted holds none).
   * detail.service (its kubernetes.io/service-name), detail.ready (how many), detail.endpoints
   * (their keys, comma-separated: the target pod's uid, else the first address).
   */
  | "endpoints-changed"
  | "event"
  | "fence-changed";

/**
 * Makes a transition of the changed object, at the change's receive time (transitions.ts builds
 * one per change; the per-kind readers it calls take it).
 */
export type Make = (
  name: TransitionName,
  extra?: Partial<Omit<Transition, "name" | "atMs" | "subject" | "source">>,
) => Transition;

/** One watched kind's transitions between two versions of an object (`before` undefined: added; `after` undefined: deleted). */
export type KindTransitions<T> = (make: Make, before: T | undefined, after: T | undefined) => Transition[];
