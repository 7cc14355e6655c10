// Named milestones of a node-loss scenario, derived from recorded transitions. Times are ms since
// the fault (negative = before it). Names are part of the summary.json contract.
import { duplicateReadyMilestone } from "./duplicate-ready.js";
import { relative, type Milestone } from "./milestone.js";
import { probeMilestones } from "./probe-answers.js";
import { servingMilestones } from "./serving.js";
import { fromTime, indexOf, type TransitionIndex } from "./transition-log.js";
import type { Transition } from "./types.js";
import { transientVolumeErrorCause } from "./volume-warnings.js";
import { isPodOf, type WorkloadRef } from "./workload-ref.js";
import { isMultiAttachEvent, workloadVolumeMilestones } from "./workload-volumes.js";
import type { Derivation, NodeLossContext } from "./derivation.js";

export type { Milestone } from "./milestone.js";
export type { WorkloadRef } from "./workload-ref.js";
export type { NodeLossContext } from "./derivation.js";

/**
 * The lost node's last renewal; Ready going Unknown / False / True again and taints, the first
 * on any node the fault hit (with several, the fault's effect starts at the first of them).
 */
function nodeMilestones(d: Derivation, out: Milestone[]): void {
  const { after, onFaulted, add } = d;
  const { faultAtMs, lostNode } = d.context;
  // The renewal's own time (renewTime), not when we saw it: the first one may come from the initial list.
  const renewals = d.index.onNode(lostNode).filter((t) => t.name === "lease-renewed" && t.atMs < faultAtMs);
  const lastRenewal = renewals[renewals.length - 1];
  if (lastRenewal) {
    const m = relative(lastRenewal, faultAtMs);
    out.push({ name: "last-lease-renewal", ...m, atMs: m.apiAtMs ?? m.atMs });
  }
  const unknown = after("node-condition").find(
    (t) => onFaulted(t) && t.detail?.["type"] === "Ready" && t.detail["status"] === "Unknown",
  );
  add("node-ready-unknown", unknown);
  add(
    "node-not-ready",
    after("node-condition").find(
      (t) => onFaulted(t) && t.detail?.["type"] === "Ready" && t.detail["status"] === "False",
    ),
  );
  for (const t of d
    .afterOfKind("Node")
    .filter((x) => (x.name === "taint-added" || x.name === "taint-removed") && onFaulted(x))) {
    add(`${t.name}:${t.detail?.["key"] ?? ""}`, t);
  }
  const lostAt = unknown?.atMs ?? faultAtMs;
  add(
    "node-ready-again",
    after("node-condition").find(
      (t) =>
        onFaulted(t) && t.atMs > lostAt && t.detail?.["type"] === "Ready" && t.detail["status"] === "True",
    ),
  );
}

/** The uids of the workload's pods that were on the lost node when it was lost. */
function lostPodsOf(d: Derivation, workload: WorkloadRef): Set<string | undefined> {
  const { index, onFaulted } = d;
  const { faultAtMs } = d.context;
  const ofWorkload = (t: Transition) => isPodOf(workload, t);
  const scheduledBefore = index
    .named("pod-scheduled")
    .filter((t) => ofWorkload(t) && onFaulted(t) && t.atMs < faultAtMs)
    .map((t) => t.subject.uid);
  const goneBefore = new Set(
    index
      .named("pod-gone")
      .filter((t) => ofWorkload(t) && t.atMs < faultAtMs)
      .map((t) => t.subject.uid),
  );
  return new Set(scheduledBefore.filter((uid) => !goneBefore.has(uid)));
}

/** One workload: its pods on the lost node, their end, and their replacements up to recovered. */
function workloadMilestones(
  d: Derivation,
  workload: WorkloadRef,
  lostPods: ReadonlySet<string | undefined>,
): void {
  const { after, add } = d;
  const ofWorkload = (t: Transition) => isPodOf(workload, t);
  const ofLostPod = (t: Transition) => ofWorkload(t) && lostPods.has(t.subject.uid);
  add(`${workload.id}:pod-deletion-requested`, after("pod-deletion-requested").find(ofLostPod));
  // Ended by the kubelet itself (graceful node shutdown, eviction): reason Terminated / Evicted.
  add(`${workload.id}:pod-terminated`, after("pod-terminal").find(ofLostPod));
  // Any of its pods, on any node, evicted by the kubelet (node pressure).
  add(
    `${workload.id}:pod-evicted`,
    after("pod-terminal").find((t) => ofWorkload(t) && t.detail?.["reason"] === "Evicted"),
  );
  const gone = after("pod-gone").filter(ofLostPod);
  add(`${workload.id}:pod-gone`, gone[0]);
  // Replacements: pods of the workload created after the fault, on another node (or, pinned to
  // their volume's node, on the faulted node once it is back).
  const replacementUids = new Set(
    after("pod-created")
      .filter(ofWorkload)
      .map((t) => t.subject.uid),
  );
  const ofReplacement = (t: Transition) =>
    ofWorkload(t) &&
    replacementUids.has(t.subject.uid) &&
    (workload.pinnedToNode === true || !d.onFaulted(t));
  add(`${workload.id}:replacement-created`, after("pod-created").find(ofWorkload));
  add(`${workload.id}:replacement-scheduled`, after("pod-scheduled").find(ofReplacement));
  add(`${workload.id}:replacement-running`, after("pod-running").find(ofReplacement));
  // A replacement's volume setup refused by a known race (see volume-warnings.ts): the kubelet
  // retries after its pod-worker backoff, which the expected windows allow for (assert.ts).
  add(
    `${workload.id}:kubelet-retry`,
    after("event").find(
      (t) =>
        transientVolumeErrorCause(t) !== undefined &&
        t.detail?.["involvedNamespace"] === workload.namespace &&
        replacementUids.has(t.detail["involvedUid"]),
    ),
  );
  const ready = after("pod-ready").filter(ofReplacement);
  add(`${workload.id}:replacement-ready`, ready[0]);
  // Recovered: as many replacements Ready as pods were lost.
  if (lostPods.size > 0 && ready.length >= lostPods.size)
    add(`${workload.id}:recovered`, ready[lostPods.size - 1]);
}

/** Volumes: the lost kubelet's volumesInUse, a multi-attach refusal, the detach and re-attach. */
function volumeMilestones(d: Derivation): void {
  const { after, onLost, add, context } = d;
  // The lost kubelet's volumesInUse report: frozen when it died abruptly, emptied by an orderly shutdown.
  const inUseChanges = after("node-volumes-in-use").filter(onLost);
  add("volumes-in-use-changed", inUseChanges[0]);
  add(
    "volumes-in-use-cleared",
    inUseChanges.find((t) => t.detail?.["count"] === "0"),
  );
  // The attach-detach controller's evidence: a replacement blocked by the volume still attached to
  // the lost node, the detach starting (the VolumeAttachment's deletion), and it being gone.
  add(
    "multi-attach",
    after("event").find(
      (t) =>
        isMultiAttachEvent(t) &&
        context.workloads.some((w) => t.detail?.["involvedNamespace"] === w.namespace),
    ),
  );
  // A VolumeAttachment with no finalizer goes in one step: its deletion is the detach's start then.
  add(
    "va-detach-started",
    d
      .afterOfKind("VolumeAttachment")
      .find((t) => (t.name === "va-deletion-requested" || t.name === "va-gone") && onLost(t)),
  );
  const vaGone = after("va-gone").find(onLost);
  add("va-gone", vaGone);
  if (vaGone) {
    const volume = vaGone.detail?.["volume"];
    add(
      "va-attached-elsewhere",
      after("va-attached").find((t) => !onLost(t) && t.detail?.["volume"] === volume),
    );
  }
}

/** Every Event of the lost node or the workloads' namespaces, and every step of its fence. */
function eventAndFenceMilestones(d: Derivation): void {
  const { after, onLost, add, context } = d;
  for (const t of after("event").filter(
    (x) => onLost(x) || context.workloads.some((w) => x.detail?.["involvedNamespace"] === w.namespace),
  )) {
    add(`event:${t.detail?.["reason"] ?? ""}`, t);
  }
  for (const t of after("fence-changed").filter((x) => onLost(x) && x.detail?.["step"])) {
    add(`fence:${t.detail?.["step"] ?? ""}:${t.detail?.["phase"] ?? ""}`, t);
  }
}

/** A derivation over `index` for `context`, adding to `out` (each name once: the first wins). */
function derivation(index: TransitionIndex, context: NodeLossContext, out: Milestone[]): Derivation {
  const { faultAtMs, lostNode } = context;
  const faultNodes = context.faultNodes ?? [lostNode];
  const names = new Set(out.map((m) => m.name));
  const push = (milestone: Milestone) => {
    names.add(milestone.name);
    out.push(milestone);
  };
  return {
    index,
    after: (name) => fromTime(index.named(name), faultAtMs),
    afterOfKind: (kind) => fromTime(index.ofKind(kind), faultAtMs),
    context,
    onLost: (t) => t.node === lostNode,
    onFaulted: (t) => t.node !== undefined && faultNodes.includes(t.node),
    add: (name, t) => {
      if (t && !names.has(name)) push({ name, ...relative(t, faultAtMs) });
    },
    addMilestone: (milestone) => {
      if (milestone && !names.has(milestone.name)) push(milestone);
    },
  };
}

export function deriveNodeLossMilestones(
  transitions: readonly Transition[] | TransitionIndex,
  context: NodeLossContext,
): Milestone[] {
  const index = indexOf(transitions);
  const { faultAtMs } = context;
  const out: Milestone[] = [{ name: "fault-injected", atMs: 0 }];
  const d = derivation(index, context, out);
  nodeMilestones(d, out);
  const pods = index.ofKind("Pod");
  const podsAndSlices = [...pods, ...index.ofKind("EndpointSlice")];
  for (const workload of context.workloads) {
    const lostPods = lostPodsOf(d, workload);
    workloadMilestones(d, workload, lostPods);
    workloadVolumeMilestones(d, workload, lostPods);
    for (const milestone of [
      ...servingMilestones(podsAndSlices, faultAtMs, workload),
      ...probeMilestones(pods, faultAtMs, workload),
    ])
      d.addMilestone(milestone);
    d.addMilestone(duplicateReadyMilestone(pods, faultAtMs, workload));
  }
  volumeMilestones(d);
  eventAndFenceMilestones(d);
  return out.sort((a, b) => a.atMs - b.atMs);
}

/** Only the transitions concerning `node`, as an index. */
function nodeView(index: TransitionIndex, node: string): TransitionIndex {
  const mine = index.onNode(node);
  return {
    all: mine,
    named: (name) => mine.filter((t) => t.name === name),
    onNode: (other) => (other === node ? mine : []),
    ofKind: (kind) => mine.filter((t) => t.subject.kind === kind),
    ofObject: (kind, name, namespace) => index.ofObject(kind, name, namespace).filter((t) => t.node === node),
  };
}

/**
 * The milestones of one of the fault's nodes on its own (names unqualified): its last renewal,
 * its own Ready going Unknown / False / True again, its taints, volumesInUse, VolumeAttachments
 * (and their volume attached elsewhere), its Events and its fence. Read from that node's
 * transitions only, so deriving it for each of many lost nodes stays proportional to theirs.
 */
export function deriveOneNodeMilestones(
  transitions: readonly Transition[] | TransitionIndex,
  faultAtMs: number,
  node: string,
): Milestone[] {
  const index = indexOf(transitions);
  const out: Milestone[] = [];
  const d = derivation(nodeView(index, node), { faultAtMs, lostNode: node, workloads: [] }, out);
  nodeMilestones(d, out);
  volumeMilestones(d);
  eventAndFenceMilestones(d);
  // The volume attached elsewhere: on another node, so from the whole index.
  const vaGone = fromTime(index.onNode(node), faultAtMs).find((t) => t.name === "va-gone");
  if (vaGone) {
    const volume = vaGone.detail?.["volume"];
    d.add(
      "va-attached-elsewhere",
      fromTime(index.named("va-attached"), faultAtMs).find(
        (t) => t.node !== node && t.detail?.["volume"] === volume,
      ),
    );
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}

/**
 * The time every workload was recovered and, with a Service, serving again, and, with a probe that
 * failed, answering again (the latest), or undefined if any was not recovered or is not answering.
 */
export function recoveryMs(
  milestones: readonly Milestone[],
  workloadIds: readonly string[],
): number | undefined {
  const at = (name: string) => milestones.find((x) => x.name === name)?.atMs;
  let latest = 0;
  for (const id of workloadIds) {
    const recovered = at(`${id}:recovered`);
    if (recovered === undefined) return undefined;
    // Recovered means serving: a workload whose Service is watched counts once its endpoints are back too,
    // and a probed one once its probe answers again (a probe that failed and never answered: not recovered).
    const answering = at(`${id}:answering`);
    if (at(`${id}:probe-failing`) !== undefined && answering === undefined) return undefined;
    latest = Math.max(latest, recovered, at(`${id}:serving`) ?? 0, answering ?? 0);
  }
  return latest;
}
