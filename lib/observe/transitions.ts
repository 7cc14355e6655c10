// Pure functions turning (previous, current) object versions into named transitions.
import { isPodTerminal, type k8s } from "../kube/client.js";
import { endpointSliceTransitions } from "./endpoint-slice-transitions.js";
import { claimTransitions } from "./claim-transitions.js";
import type { KindTransitions, Make, ObjectRef, PodFacts, Transition, WatchedKind } from "./types.js";

export interface ChangeContext {
  kind: WatchedKind;
  atMs: number;
  source: "watch" | "relist";
}

function ref(kind: WatchedKind, object: k8s.KubernetesObject): ObjectRef {
  const meta = object.metadata;
  return {
    kind,
    name: meta?.name ?? "",
    ...(meta?.namespace ? { namespace: meta.namespace } : {}),
    ...(meta?.uid ? { uid: meta.uid } : {}),
  };
}

function iso(value: unknown): string | undefined {
  if (value instanceof Date) return value.toISOString();
  return typeof value === "string" ? value : undefined;
}

/** `{ apiTime }` when the object carried a time for the change, else nothing. */
function apiTimeOf(value: unknown): { apiTime?: string } {
  const time = iso(value);
  return time ? { apiTime: time } : {};
}

function maker(context: ChangeContext, object: k8s.KubernetesObject): Make {
  const subject = ref(context.kind, object);
  return (name, extra = {}) => ({ name, atMs: context.atMs, subject, source: context.source, ...extra });
}

/** The kubelet's DisruptionTarget messages (pkg/kubelet/eviction, nodeshutdown), by the reason they stand for. */
const KUBELET_DISRUPTION_REASONS: readonly (readonly [prefix: string, reason: string])[] = [
  ["The node was low on resource", "Evicted"],
  ["The node had condition", "Evicted"],
  ["Pod was terminated in response to imminent node shutdown", "Terminated"],
];

/**
 * Why a terminal pod ended: status.reason, or, when the kubelet left it empty, the reason its
 * DisruptionTarget condition (TerminationByKubelet) stands for. A v1.34 kubelet that evicts a pod
 * whose containers exit 0 on SIGTERM records phase Succeeded and no status.reason (measured on
 * kind): only the condition and the Evicted event say it was an eviction.
 */
export function terminalReason(pod: k8s.V1Pod): string {
  const reason = pod.status?.reason ?? "";
  if (reason !== "") return reason;
  const disruption = pod.status?.conditions?.find(
    (c) => c.type === "DisruptionTarget" && c.status === "True" && c.reason === "TerminationByKubelet",
  );
  const message = disruption?.message ?? "";
  return KUBELET_DISRUPTION_REASONS.find(([prefix]) => message.startsWith(prefix))?.[1] ?? "";
}

/** One part of a Node's transitions: from its version `before` (none when added) to `after`. */
type NodePart = (make: Make, node: string, before: k8s.V1Node | undefined, after: k8s.V1Node) => Transition[];

/** Each condition whose status changed (Ready, MemoryPressure, ...), with its previous status. */
const conditionTransitions: NodePart = (make, node, before, after) => {
  const out: Transition[] = [];
  for (const condition of after.status?.conditions ?? []) {
    const previous = before?.status?.conditions?.find((c) => c.type === condition.type);
    if (previous?.status !== condition.status) {
      out.push(
        make("node-condition", {
          node,
          ...apiTimeOf(condition.lastTransitionTime),
          detail: {
            type: condition.type,
            status: condition.status,
            from: previous?.status ?? "",
            reason: condition.reason ?? "",
          },
        }),
      );
    }
  }
  return out;
};

/** The kubelet's status.volumesInUse report, when it changed. */
const volumesInUseTransitions: NodePart = (make, node, before, after) => {
  const inUse = [...(after.status?.volumesInUse ?? [])].sort();
  const inUseBefore = [...(before?.status?.volumesInUse ?? [])].sort();
  if (!before || inUse.join(",") === inUseBefore.join(",")) return [];
  return [
    make("node-volumes-in-use", {
      node,
      detail: { count: String(inUse.length), volumes: inUse.join(","), from: String(inUseBefore.length) },
    }),
  ];
};

/** Taints added (with their timeAdded) and removed, by key and effect. */
const taintTransitions: NodePart = (make, node, before, after) => {
  const out: Transition[] = [];
  const key = (t: k8s.V1Taint) => `${t.key}:${t.effect}`;
  const beforeTaints = new Map((before?.spec?.taints ?? []).map((t) => [key(t), t]));
  const afterTaints = new Map((after.spec?.taints ?? []).map((t) => [key(t), t]));
  for (const [k, t] of afterTaints) {
    if (!beforeTaints.has(k)) {
      out.push(
        make("taint-added", {
          node,
          ...apiTimeOf(t.timeAdded),
          detail: { key: t.key, effect: t.effect, value: t.value ?? "" },
        }),
      );
    }
  }
  for (const [k, t] of beforeTaints) {
    if (!afterTaints.has(k))
      out.push(make("taint-removed", { node, detail: { key: t.key, effect: t.effect } }));
  }
  return out;
};

const nodeTransitions: KindTransitions<k8s.V1Node> = (make, before, after) => {
  const node = (after ?? before)?.metadata?.name ?? "";
  const added = !before && after ? [make("node-added", { node })] : [];
  if (!after) return added;
  return [
    ...added,
    ...conditionTransitions(make, node, before, after),
    ...volumesInUseTransitions(make, node, before, after),
    ...taintTransitions(make, node, before, after),
  ];
};

const leaseTransitions: KindTransitions<k8s.V1Lease> = (make, before, after) => {
  const renewed = iso(after?.spec?.renewTime);
  if (!after || !renewed || renewed === iso(before?.spec?.renewTime)) return [];
  return [
    make("lease-renewed", {
      node: after.metadata?.name ?? "",
      apiTime: renewed,
      detail: { holder: after.spec?.holderIdentity ?? "" },
    }),
  ];
};

function podReady(pod: k8s.V1Pod | undefined): boolean {
  return pod?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/** What every pod transition carries in its detail: its owner and its app label. */
function podDetail(pod: k8s.V1Pod | undefined): Record<string, string> {
  const owner = pod?.metadata?.ownerReferences?.[0];
  return {
    ownerKind: owner?.kind ?? "",
    ownerName: owner?.name ?? "",
    app: pod?.metadata?.labels?.["app"] ?? "",
  };
}

/** The pod's labels and the claims of its volumes (a generic ephemeral volume's is "<pod>-<volume>"). */
function podFacts(pod: k8s.V1Pod | undefined): PodFacts {
  const claims: string[] = [];
  for (const volume of pod?.spec?.volumes ?? []) {
    if (volume.persistentVolumeClaim) claims.push(volume.persistentVolumeClaim.claimName);
    else if (volume.ephemeral) claims.push(`${pod?.metadata?.name ?? ""}-${volume.name}`);
  }
  return { labels: { ...(pod?.metadata?.labels ?? {}) }, claims };
}

function nodeOf(pod: k8s.V1Pod | undefined): string {
  return pod?.spec?.nodeName ?? "";
}

/** A pod the API has now: its changes from `before`, in lifecycle order. */
interface PodChange {
  make: Make;
  before: k8s.V1Pod | undefined;
  after: k8s.V1Pod;
  detail: Record<string, string>;
}

/** Created, then scheduled (bound to a node), each with the API's own time. */
function podArrivalTransitions({ make, before, after, detail }: PodChange): Transition[] {
  const out: Transition[] = [];
  const node = nodeOf(after);
  if (!before)
    out.push(
      make("pod-created", {
        ...(node ? { node } : {}),
        ...apiTimeOf(after.metadata?.creationTimestamp),
        detail,
      }),
    );
  if (node && !nodeOf(before)) {
    const scheduled = after.status?.conditions?.find((c) => c.type === "PodScheduled");
    out.push(
      make("pod-scheduled", {
        node,
        ...apiTimeOf(scheduled?.lastTransitionTime),
        detail,
      }),
    );
  }
  return out;
}

/** Running, then Ready (or no longer Ready). */
function podProgressTransitions({ make, before, after, detail }: PodChange): Transition[] {
  const out: Transition[] = [];
  const on = nodeOf(after) ? { node: nodeOf(after) } : {};
  if (after.status?.phase === "Running" && before?.status?.phase !== "Running")
    out.push(make("pod-running", { ...on, detail }));
  if (podReady(after) && !podReady(before)) {
    const ready = after.status?.conditions?.find((c) => c.type === "Ready");
    out.push(
      make("pod-ready", {
        ...on,
        ...apiTimeOf(ready?.lastTransitionTime),
        detail,
      }),
    );
  }
  if (before && podReady(before) && !podReady(after)) {
    const ready = after.status?.conditions?.find((c) => c.type === "Ready");
    out.push(make("pod-unready", { ...on, ...apiTimeOf(ready?.lastTransitionTime), detail }));
  }
  return out;
}

/** Ended (Succeeded or Failed, with why), and its deletion requested. */
function podEndTransitions({ make, before, after, detail }: PodChange): Transition[] {
  const out: Transition[] = [];
  const on = nodeOf(after) ? { node: nodeOf(after) } : {};
  if (isPodTerminal(after) && !isPodTerminal(before)) {
    out.push(
      make("pod-terminal", {
        ...on,
        detail: {
          ...detail,
          phase: after.status?.phase ?? "",
          reason: terminalReason(after),
          message: after.status?.message ?? "",
        },
      }),
    );
  }
  if (after.metadata?.deletionTimestamp && !before?.metadata?.deletionTimestamp) {
    // deletionTimestamp is when deletion is due (request time + grace period), kept as the API time.
    out.push(
      make("pod-deletion-requested", {
        ...on,
        apiTime: iso(after.metadata.deletionTimestamp) ?? "",
        detail: { ...detail, reason: after.status?.reason ?? "" },
      }),
    );
  }
  return out;
}

const podTransitions: KindTransitions<k8s.V1Pod> = (makeAny, before, after) => {
  const detail = podDetail(after ?? before);
  const pod = podFacts(after ?? before);
  const make: Make = (name, extra = {}) => makeAny(name, { pod, ...extra });
  if (!after) return [make("pod-gone", { node: nodeOf(before), detail })];
  const change: PodChange = { make, before, after, detail };
  return [...podArrivalTransitions(change), ...podProgressTransitions(change), ...podEndTransitions(change)];
};

const vaTransitions: KindTransitions<k8s.V1VolumeAttachment> = (make, before, after) => {
  const current = after ?? before;
  const node = current?.spec.nodeName ?? "";
  const detail = { volume: current?.spec.source.persistentVolumeName ?? "" };
  if (!after) return [make("va-gone", { node, detail })];
  const out: Transition[] = [];
  if (!before)
    out.push(
      make("va-created", {
        node,
        ...apiTimeOf(after.metadata?.creationTimestamp),
        detail,
      }),
    );
  if (after.status?.attached === true && before?.status?.attached !== true)
    out.push(make("va-attached", { node, detail }));
  if (after.metadata?.deletionTimestamp && !before?.metadata?.deletionTimestamp) {
    out.push(
      make("va-deletion-requested", { node, apiTime: iso(after.metadata.deletionTimestamp) ?? "", detail }),
    );
  }
  return out;
};

const eventTransitions: KindTransitions<k8s.CoreV1Event> = (make, before, after) => {
  if (!after || (before && before.count === after.count)) return [];
  const involved = after.involvedObject;
  const apiTime = iso(after.eventTime) ?? iso(after.lastTimestamp) ?? iso(after.firstTimestamp);
  return [
    make("event", {
      ...(involved.kind === "Node" && involved.name ? { node: involved.name } : {}),
      ...(apiTime ? { apiTime } : {}),
      detail: {
        reason: after.reason ?? "",
        type: after.type ?? "",
        involvedKind: involved.kind ?? "",
        involvedName: involved.name ?? "",
        involvedNamespace: involved.namespace ?? "",
        involvedUid: involved.uid ?? "",
        message: after.message ?? "",
        source: after.source?.component ?? after.reportingComponent ?? "",
      },
    }),
  ];
};

interface FenceLike extends k8s.KubernetesObject {
  spec?: { node?: string };
  status?: { step?: string; phase?: string };
}

const fenceTransitions: KindTransitions<FenceLike> = (make, before, after) => {
  const current = after ?? before;
  const node = current?.spec?.node ?? "";
  const step = after?.status?.step ?? "";
  const phase = after?.status?.phase ?? (after ? "" : "deleted");
  if (before && after && before.status?.step === step && before.status.phase === phase) return [];
  return [make("fence-changed", { node, detail: { step, phase } })];
};

/**
 * Each watched kind's transitions. The kinds whose API type has required fields are handed the object
 * as the watch delivered it (a KubernetesObject of that kind).
 */
const KIND_TRANSITIONS: { readonly [K in WatchedKind]: KindTransitions<k8s.KubernetesObject> } = {
  Node: nodeTransitions,
  Lease: leaseTransitions,
  Pod: podTransitions,
  PersistentVolumeClaim: claimTransitions,
  EndpointSlice: endpointSliceTransitions as KindTransitions<k8s.KubernetesObject>,
  VolumeAttachment: vaTransitions as KindTransitions<k8s.KubernetesObject>,
  Event: eventTransitions as KindTransitions<k8s.KubernetesObject>,
  NodeFence: fenceTransitions,
};

/** All transitions between two versions of one object (`before` undefined: added; `after` undefined: deleted). */
export function transitionsOf(
  context: ChangeContext,
  before: k8s.KubernetesObject | undefined,
  after: k8s.KubernetesObject | undefined,
): Transition[] {
  const object = after ?? before;
  if (!object) return [];
  return KIND_TRANSITIONS[context.kind](maker(context, object), before, after);
}
