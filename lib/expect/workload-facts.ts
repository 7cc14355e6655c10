// A scenario workload's facts, read from its own manifests: what the timeline model needs to know
// about its pods (kind, replicas, tolerations, grace, budget, volume, priority, QoS, Service), each
// resolved as the API server, the controllers and the kubelet would resolve it.
import type { TimingProfile } from "../cluster/profiles.js";
import { RekindleError } from "../errors.js";
import type { k8s } from "../kube/client.js";
import type { StarvedResource } from "../kube/eviction-order.js";
import type { StorageClassInfo } from "../kube/storage-classes.js";
import { SYSTEM_CRITICAL_PRIORITY } from "../kube/pod-kinds.js";
import { disruptionBudgetFor, selects, type DisruptionBudget } from "./disruption-budget.js";
import {
  NOT_READY_TAINT,
  OUT_OF_SERVICE_TAINT,
  podPriority,
  qosClass,
  requestBytes,
  simulatedUsage,
  tolerationMs,
  UNREACHABLE_TAINT,
  type PriorityClassLike,
  type QosClass,
} from "./pod-facts.js";
import { workloadClaims, workloadVolume, type VolumeKind } from "./workload-volume.js";

/** A manifest as parsed from YAML (plain JSON-shaped object). */
export type KubeObject = k8s.KubernetesObject;

export const WORKLOAD_KINDS = ["Deployment", "StatefulSet", "DaemonSet", "Job", "Pod"] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];
/** Kinds that run pods but that the model does not cover: refused rather than ignored. */
const UNSUPPORTED_KINDS = new Set(["CronJob", "ReplicaSet", "ReplicationController"]);

export type { VolumeKind } from "./workload-volume.js";

/**
 * When a lost pod is replaced: "at-deletion" as soon as it is marked for deletion (ReplicaSet;
 * Job with podReplacementPolicy TerminatingOrFailed), "after-gone" only once the old pod object is
 * gone (StatefulSet: one pod per identity; Job with podReplacementPolicy Failed or a
 * podFailurePolicy), "never" elsewhere (bare Pod; DaemonSet: one pod per node).
 */
export type ReplacementPolicy = "at-deletion" | "after-gone" | "never";

export interface WorkloadFacts {
  /** The workload's id in milestones (`<id>:recovered`). */
  id: string;
  kind: WorkloadKind;
  /** metadata.name of the workload object. */
  name: string;
  /**
   * Pods it wants: spec.replicas (default 1) for Deployment and StatefulSet; for a Job its
   * parallelism (default 1), at most its completions; 1 for a bare Pod; for a DaemonSet
   * options.daemonSetPods (one per node it runs on; default 1).
   */
  replicas: number;
  /** The pod template's labels: what selects its pods. */
  matchLabels: Record<string, string>;
  /**
   * How long its pods stay on a node tainted node.kubernetes.io/not-ready:NoExecute, in ms: its own
   * NoExecute toleration's tolerationSeconds (the smallest if several match), null when it
   * tolerates it forever (DaemonSet pods always do), the API server's default when it has none.
   */
  notReadyTolerationMs: number | null;
  /** The same for node.kubernetes.io/unreachable: what evicts its pods from a lost node. */
  unreachableTolerationMs: number | null;
  /** Whether unreachableTolerationMs is its own (a toleration in its template) rather than the default. */
  ownUnreachableToleration: boolean;
  /** The same for node.kubernetes.io/out-of-service (no default: a pod without one is evicted at once, 0). */
  outOfServiceTolerationMs: number | null;
  /** terminationGracePeriodSeconds in ms; default 30 s. */
  terminationGracePeriodMs: number;
  /** The PodDisruptionBudget selecting its pods, resolved against `replicas`; absent when none. */
  disruptionBudget?: DisruptionBudget;
  volume: VolumeKind;
  /** volume "node-local": what keeps its volume on one node, in words. */
  nodeLocalWhy?: string;
  replacement: ReplacementPolicy;
  /** spec.priority, else its priorityClassName's value (built-in or a PriorityClass in the set; 0 unknown). */
  priority: number;
  /** Priority at or above system-cluster-critical: the kubelet never evicts it and shuts it down last. */
  critical: boolean;
  qos: QosClass;
  /** Summed container requests in bytes, per resource the kubelet's eviction ranks by. */
  requestBytes: Record<StarvedResource, number>;
  /** The sim's stand-in usage (rekindle.dev/sim-usage on the template), when written. */
  usageBytes: Partial<Record<StarvedResource, number>>;
  /** The Service that fronts it: options.service, else the first Service in the set selecting its pods. */
  service?: string;
  /** Checked through its Service from inside the cluster by this kind of probe (a scenario file's `probe`). */
  probe?: "http" | "tcp";
}

export interface WorkloadFactsOptions {
  /** apiserver --default-not-ready-toleration-seconds, in ms (the profile's or the file's knob). */
  defaultNotReadyTolerationMs: number;
  /** apiserver --default-unreachable-toleration-seconds, in ms. */
  defaultUnreachableTolerationMs: number;
  /** The provider's storage attaches RWO volumes to nodes. Default true (the sim's CSI driver). */
  volumeAttachRequired?: boolean;
  /**
   * The cluster's StorageClasses (the default class of claims that name none, and whether a
   * class is node-local); the manifests' own StorageClasses and PersistentVolumes are read from
   * the objects. Default none known: a claim naming no class is not taken to be node-local.
   */
  storageClasses?: readonly StorageClassInfo[];
  /** A DaemonSet's replicas: the nodes it runs a pod on. Default 1. */
  daemonSetPods?: number;
  /** The Service the scenario file names for it, over the one found by selector. */
  service?: string;
}

const DEFAULT_GRACE_SECONDS = 30;

/** The API server's default tolerations of a profile (with the scenario's knob overrides applied to it). */
export function tolerationDefaults(
  profile: Pick<TimingProfile, "defaultNotReadyTolerationSeconds" | "defaultUnreachableTolerationSeconds">,
): Pick<WorkloadFactsOptions, "defaultNotReadyTolerationMs" | "defaultUnreachableTolerationMs"> {
  return {
    defaultNotReadyTolerationMs: profile.defaultNotReadyTolerationSeconds * 1000,
    defaultUnreachableTolerationMs: profile.defaultUnreachableTolerationSeconds * 1000,
  };
}

interface Workload {
  kind: WorkloadKind;
  object: KubeObject;
  template: k8s.V1PodTemplateSpec;
}

function describeObject(o: KubeObject): string {
  return `${o.kind ?? "?"} ${o.metadata?.name ?? "(no name)"}`;
}

function workloadOf(id: string, objects: readonly KubeObject[]): Workload {
  const unsupported = objects.find((o) => UNSUPPORTED_KINDS.has(o.kind ?? ""));
  if (unsupported !== undefined) {
    throw new RekindleError(
      "INVALID_INPUT",
      `workload ${id}: ${describeObject(unsupported)} is not a kind the timeline model covers; supported: ${WORKLOAD_KINDS.join(", ")}`,
      {
        hint: `give workload ${id} one ${WORKLOAD_KINDS.join(", ")} (a CronJob's Job, a ReplicaSet's Deployment)`,
      },
    );
  }
  const found = objects.filter((o) => (WORKLOAD_KINDS as readonly string[]).includes(o.kind ?? ""));
  const [object] = found;
  if (object === undefined || found.length > 1) {
    throw new RekindleError(
      "INVALID_INPUT",
      `workload ${id}: its manifests hold ${found.length === 0 ? "no workload" : found.map(describeObject).join(", ")}; a scenario workload is exactly one ${WORKLOAD_KINDS.join(", ")}`,
      { hint: "split the objects into one scenario workload each" },
    );
  }
  const kind = object.kind as WorkloadKind;
  if (kind === "Pod") {
    const pod = object as k8s.V1Pod;
    return {
      kind,
      object,
      template: { ...(pod.metadata ? { metadata: pod.metadata } : {}), spec: pod.spec ?? { containers: [] } },
    };
  }
  const spec = (object as { spec?: { template?: k8s.V1PodTemplateSpec } }).spec;
  if (spec?.template?.spec === undefined) {
    throw new RekindleError(
      "INVALID_INPUT",
      `workload ${id}: ${describeObject(object)} has no spec.template.spec`,
    );
  }
  return { kind, object, template: spec.template };
}

function replicasOf(w: Workload, options: WorkloadFactsOptions): number {
  switch (w.kind) {
    case "Deployment":
      return (w.object as k8s.V1Deployment).spec?.replicas ?? 1;
    case "StatefulSet":
      return (w.object as k8s.V1StatefulSet).spec?.replicas ?? 1;
    case "Job": {
      const spec = (w.object as k8s.V1Job).spec;
      return Math.min(spec?.parallelism ?? 1, spec?.completions ?? Number.POSITIVE_INFINITY);
    }
    case "Pod":
      return 1;
    case "DaemonSet":
      return options.daemonSetPods ?? 1;
  }
}

function replacementOf(w: Workload): ReplacementPolicy {
  switch (w.kind) {
    case "Deployment":
      return "at-deletion";
    case "StatefulSet":
      return "after-gone";
    case "Job": {
      const spec = (w.object as k8s.V1Job).spec;
      // A podFailurePolicy makes Failed the default podReplacementPolicy (KEP-3939).
      const policy =
        spec?.podReplacementPolicy ?? (spec?.podFailurePolicy ? "Failed" : "TerminatingOrFailed");
      return policy === "Failed" ? "after-gone" : "at-deletion";
    }
    case "Pod":
    case "DaemonSet":
      return "never";
  }
}

function volumeOf(w: Workload, objects: readonly KubeObject[], options: WorkloadFactsOptions) {
  const claimTemplates =
    w.kind === "StatefulSet" ? ((w.object as k8s.V1StatefulSet).spec?.volumeClaimTemplates ?? []) : [];
  return workloadVolume(workloadClaims(w.template, claimTemplates, objects), objects, {
    attach: options.volumeAttachRequired !== false,
    clusterClasses: options.storageClasses ?? [],
  });
}

function priorityClasses(objects: readonly KubeObject[]): PriorityClassLike[] {
  return (objects.filter((o) => o.kind === "PriorityClass") as k8s.V1PriorityClass[]).map((c) => ({
    name: c.metadata?.name ?? "",
    value: c.value,
    globalDefault: c.globalDefault === true,
  }));
}

function serviceOf(objects: readonly KubeObject[], labels: Record<string, string>): string | undefined {
  const services = objects.filter((o) => o.kind === "Service") as k8s.V1Service[];
  const match = services.find((s) => {
    const selector = s.spec?.selector;
    return (
      selector !== undefined && Object.keys(selector).length > 0 && selects({ matchLabels: selector }, labels)
    );
  });
  return match?.metadata?.name;
}

/**
 * The facts of workload `id` from its parsed manifests: exactly one Deployment, StatefulSet,
 * DaemonSet, Job or bare Pod, plus any PodDisruptionBudget, Service, PersistentVolumeClaim,
 * StorageClass, PersistentVolume and PriorityClass beside it (other kinds are ignored). CronJob, ReplicaSet and ReplicationController
 * are refused (INVALID_INPUT), as is a set with no workload or more than one.
 */
export function workloadFacts(
  id: string,
  objects: readonly KubeObject[],
  options: WorkloadFactsOptions,
): WorkloadFacts {
  const w = workloadOf(id, objects);
  const spec = w.template.spec ?? { containers: [] };
  const labels = { ...(w.template.metadata?.labels ?? {}) };
  const replicas = replicasOf(w, options);
  const tolerations = spec.tolerations ?? [];
  // The DaemonSet controller adds not-ready and unreachable NoExecute tolerations with no seconds.
  const daemon = w.kind === "DaemonSet";
  const budgets = objects.filter((o) => o.kind === "PodDisruptionBudget") as k8s.V1PodDisruptionBudget[];
  const disruptionBudget = disruptionBudgetFor(budgets, labels, replicas);
  const priority = podPriority(spec, priorityClasses(objects));
  const service = options.service ?? serviceOf(objects, labels);
  const volume = volumeOf(w, objects, options);
  return {
    id,
    kind: w.kind,
    name: w.object.metadata?.name ?? "",
    replicas,
    matchLabels: labels,
    notReadyTolerationMs: daemon
      ? null
      : tolerationMs(tolerations, NOT_READY_TAINT, options.defaultNotReadyTolerationMs),
    unreachableTolerationMs: daemon
      ? null
      : tolerationMs(tolerations, UNREACHABLE_TAINT, options.defaultUnreachableTolerationMs),
    ownUnreachableToleration: daemon || tolerationMs(tolerations, UNREACHABLE_TAINT, -1) !== -1,
    outOfServiceTolerationMs: tolerationMs(tolerations, OUT_OF_SERVICE_TAINT, 0),
    terminationGracePeriodMs: (spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000,
    ...(disruptionBudget ? { disruptionBudget } : {}),
    volume: volume.kind,
    ...(volume.nodeLocalWhy !== undefined ? { nodeLocalWhy: volume.nodeLocalWhy } : {}),
    replacement: replacementOf(w),
    priority,
    critical: priority >= SYSTEM_CRITICAL_PRIORITY,
    qos: qosClass(spec),
    requestBytes: {
      memory: requestBytes(spec, "memory"),
      "ephemeral-storage": requestBytes(spec, "ephemeral-storage"),
    },
    usageBytes: simulatedUsage(w.template.metadata?.annotations),
    ...(service !== undefined ? { service } : {}),
  };
}
