// Named milestones of a node-loss scenario, derived from recorded transitions. Times are ms since
// the fault (negative = before it). Names are part of the summary.json contract.
import { duplicateReadyMilestone } from "./duplicate-ready.js";
import { relative, type Milestone } from "./milestone.js";
import { probeMilestones } from "./probe-answers.js";
import { servingMilestones } from "./serving.js";
import type { Transition } from "./types.js";
import { transientVolumeErrorCause } from "./volume-warnings.js";
import { isPodOf, type WorkloadRef } from "./workload-ref.js";
import { isMultiAttachEvent, workloadVolumeMilestones } from "./workload-volumes.js";

export type { Milestone } from "./milestone.js";
export type { WorkloadRef } from "./workload-ref.js";

export interface NodeLossContext {
  faultAtMs: number;
  lostNode: string;
  /** Every node the fault hit (the lost node first); default just the lost node. */
  faultNodes?: readonly string[];
  workloads: WorkloadRef[];
}

/** What each group of milestones is derived from: the transitions, the lost node, and where to add. */
export interface Derivation {
  transitions: readonly Transition[];
  /** The transitions from the fault on. */
  after: readonly Transition[];
  context: NodeLossContext;
  onLost: (t: Transition) => boolean;
  /** On any node the fault hit: whose pods a workload lost, where their volumes were attached. */
  onFaulted: (t: Transition) => boolean;
  /** Adds a milestone at `t`, unless there is none or the name is already taken (the first wins). */
  add: (name: string, t: Transition | undefined) => void;
  /** Adds a milestone made elsewhere, unless its name is already taken. */
  addMilestone: (milestone: Milestone | undefined) => void;
}

/**
 * The lost node's last renewal; Ready going Unknown / False / True again and taints, the first
 * on any node the fault hit (with several, the fault's effect starts at the first of them).
 */
function nodeMilestones(d: Derivation, out: Milestone[]): void {
  const { after, onLost, onFaulted, add } = d;
  const { faultAtMs } = d.context;
  // The renewal's own time (renewTime), not when we saw it: the first one may come from the initial list.
  const renewals = d.transitions.filter((t) => t.name === "lease-renewed" && onLost(t) && t.atMs < faultAtMs);
  const lastRenewal = renewals[renewals.length - 1];
  if (lastRenewal) {
    const m = relative(lastRenewal, faultAtMs);
    out.push({ name: "last-lease-renewal", ...m, atMs: m.apiAtMs ?? m.atMs });
  }
  const unknown = after.find(
    (t) =>
      t.name === "node-condition" &&
      onFaulted(t) &&
      t.detail?.["type"] === "Ready" &&
      t.detail["status"] === "Unknown",
  );
  add("node-ready-unknown", unknown);
  add(
    "node-not-ready",
    after.find(
      (t) =>
        t.name === "node-condition" &&
        onFaulted(t) &&
        t.detail?.["type"] === "Ready" &&
        t.detail["status"] === "False",
    ),
  );
  for (const t of after.filter(
    (x) => (x.name === "taint-added" || x.name === "taint-removed") && onFaulted(x),
  )) {
    add(`${t.name}:${t.detail?.["key"] ?? ""}`, t);
  }
  const lostAt = unknown?.atMs ?? faultAtMs;
  add(
    "node-ready-again",
    after.find(
      (t) =>
        t.name === "node-condition" &&
        onFaulted(t) &&
        t.atMs > lostAt &&
        t.detail?.["type"] === "Ready" &&
        t.detail["status"] === "True",
    ),
  );
}

/** The uids of the workload's pods that were on the lost node when it was lost. */
function lostPodsOf(d: Derivation, workload: WorkloadRef): Set<string | undefined> {
  const { transitions, onFaulted } = d;
  const { faultAtMs } = d.context;
  const ofWorkload = (t: Transition) => isPodOf(workload, t);
  const scheduledBefore = transitions
    .filter((t) => t.name === "pod-scheduled" && ofWorkload(t) && onFaulted(t) && t.atMs < faultAtMs)
    .map((t) => t.subject.uid);
  const goneBefore = new Set(
    transitions
      .filter((t) => t.name === "pod-gone" && ofWorkload(t) && t.atMs < faultAtMs)
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
  add(
    `${workload.id}:pod-deletion-requested`,
    after.find((t) => t.name === "pod-deletion-requested" && ofLostPod(t)),
  );
  // Ended by the kubelet itself (graceful node shutdown, eviction): reason Terminated / Evicted.
  add(
    `${workload.id}:pod-terminated`,
    after.find((t) => t.name === "pod-terminal" && ofLostPod(t)),
  );
  // Any of its pods, on any node, evicted by the kubelet (node pressure).
  add(
    `${workload.id}:pod-evicted`,
    after.find((t) => t.name === "pod-terminal" && ofWorkload(t) && t.detail?.["reason"] === "Evicted"),
  );
  const gone = after.filter((t) => t.name === "pod-gone" && ofLostPod(t));
  add(`${workload.id}:pod-gone`, gone[0]);
  // Replacements: pods of the workload created after the fault, on another node (or, pinned to
  // their volume's node, on the faulted node once it is back).
  const replacementUids = new Set(
    after.filter((t) => t.name === "pod-created" && ofWorkload(t)).map((t) => t.subject.uid),
  );
  const ofReplacement = (t: Transition) =>
    ofWorkload(t) &&
    replacementUids.has(t.subject.uid) &&
    (workload.pinnedToNode === true || !d.onFaulted(t));
  add(
    `${workload.id}:replacement-created`,
    after.find((t) => t.name === "pod-created" && ofWorkload(t)),
  );
  add(
    `${workload.id}:replacement-scheduled`,
    after.find((t) => t.name === "pod-scheduled" && ofReplacement(t)),
  );
  add(
    `${workload.id}:replacement-running`,
    after.find((t) => t.name === "pod-running" && ofReplacement(t)),
  );
  // A replacement's volume setup refused by a known race (see volume-warnings.ts): the kubelet
  // retries after its pod-worker backoff, which the expected windows allow for (assert.ts).
  add(
    `${workload.id}:kubelet-retry`,
    after.find(
      (t) =>
        transientVolumeErrorCause(t) !== undefined &&
        t.detail?.["involvedNamespace"] === workload.namespace &&
        replacementUids.has(t.detail["involvedUid"]),
    ),
  );
  const ready = after.filter((t) => t.name === "pod-ready" && ofReplacement(t));
  add(`${workload.id}:replacement-ready`, ready[0]);
  // Recovered: as many replacements Ready as pods were lost.
  if (lostPods.size > 0 && ready.length >= lostPods.size)
    add(`${workload.id}:recovered`, ready[lostPods.size - 1]);
}

/** Volumes: the lost kubelet's volumesInUse, a multi-attach refusal, the detach and re-attach. */
function volumeMilestones(d: Derivation): void {
  const { after, onLost, add, context } = d;
  // The lost kubelet's volumesInUse report: frozen when it died abruptly, emptied by an orderly shutdown.
  const inUseChanges = after.filter((t) => t.name === "node-volumes-in-use" && onLost(t));
  add("volumes-in-use-changed", inUseChanges[0]);
  add(
    "volumes-in-use-cleared",
    inUseChanges.find((t) => t.detail?.["count"] === "0"),
  );
  // The attach-detach controller's evidence: a replacement blocked by the volume still attached to
  // the lost node, the detach starting (the VolumeAttachment's deletion), and it being gone.
  add(
    "multi-attach",
    after.find(
      (t) =>
        isMultiAttachEvent(t) &&
        context.workloads.some((w) => t.detail?.["involvedNamespace"] === w.namespace),
    ),
  );
  // A VolumeAttachment with no finalizer goes in one step: its deletion is the detach's start then.
  add(
    "va-detach-started",
    after.find((t) => (t.name === "va-deletion-requested" || t.name === "va-gone") && onLost(t)),
  );
  const vaGone = after.find((t) => t.name === "va-gone" && onLost(t));
  add("va-gone", vaGone);
  if (vaGone) {
    const volume = vaGone.detail?.["volume"];
    add(
      "va-attached-elsewhere",
      after.find((t) => t.name === "va-attached" && !onLost(t) && t.detail?.["volume"] === volume),
    );
  }
}

/** Every Event of the lost node or the workloads' namespaces, and every step of its fence. */
function eventAndFenceMilestones(d: Derivation): void {
  const { after, onLost, add, context } = d;
  for (const t of after.filter(
    (x) =>
      x.name === "event" &&
      (onLost(x) || context.workloads.some((w) => x.detail?.["involvedNamespace"] === w.namespace)),
  )) {
    add(`event:${t.detail?.["reason"] ?? ""}`, t);
  }
  for (const t of after.filter((x) => x.name === "fence-changed" && onLost(x) && x.detail?.["step"])) {
    add(`fence:${t.detail?.["step"] ?? ""}:${t.detail?.["phase"] ?? ""}`, t);
  }
}

export function deriveNodeLossMilestones(
  transitions: readonly Transition[],
  context: NodeLossContext,
): Milestone[] {
  const { faultAtMs, lostNode } = context;
  const faultNodes = context.faultNodes ?? [lostNode];
  const out: Milestone[] = [{ name: "fault-injected", atMs: 0 }];
  const derivation: Derivation = {
    transitions,
    after: transitions.filter((t) => t.atMs >= faultAtMs),
    context,
    onLost: (t) => t.node === lostNode,
    onFaulted: (t) => t.node !== undefined && faultNodes.includes(t.node),
    add: (name, t) => {
      if (t && !out.some((m) => m.name === name)) out.push({ name, ...relative(t, faultAtMs) });
    },
    addMilestone: (milestone) => {
      if (milestone && !out.some((m) => m.name === milestone.name)) out.push(milestone);
    },
  };
  nodeMilestones(derivation, out);
  for (const workload of context.workloads) {
    const lostPods = lostPodsOf(derivation, workload);
    workloadMilestones(derivation, workload, lostPods);
    workloadVolumeMilestones(derivation, workload, lostPods);
    for (const milestone of [
      ...servingMilestones(transitions, faultAtMs, workload),
      ...probeMilestones(transitions, faultAtMs, workload),
    ])
      derivation.addMilestone(milestone);
    derivation.addMilestone(duplicateReadyMilestone(transitions, faultAtMs, workload));
  }
  volumeMilestones(derivation);
  eventAndFenceMilestones(derivation);
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
