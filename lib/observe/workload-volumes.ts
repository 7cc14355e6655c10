// The volume milestones of one workload, so two StatefulSets with volumes are told apart: its lost
// pods' claims lead to their PersistentVolumes (the claims' bindings, "pvc-bound"), and those to
// the VolumeAttachments on the lost node and elsewhere.
import type { Derivation } from "./derivation.js";
import type { Transition } from "./types.js";
import { isPodOf, type WorkloadRef } from "./workload-ref.js";

/** The attach-detach controller refusing a second attachment of a volume attached to another node. */
export function isMultiAttachEvent(t: Transition): boolean {
  return (
    t.name === "event" &&
    t.detail?.["reason"] === "FailedAttachVolume" &&
    (t.detail["message"] ?? "").includes("Multi-Attach")
  );
}

/**
 * The PersistentVolumes bound to these claims of the namespace: each claim's last binding before
 * the fault, else its first after it (a claim bound late still names the lost pod's volume).
 */
export function boundVolumes(
  transitions: readonly Transition[],
  namespace: string,
  claims: ReadonlySet<string>,
  faultAtMs: number,
): Set<string> {
  const before = new Map<string, string>();
  const later = new Map<string, string>();
  for (const t of transitions) {
    if (t.name !== "pvc-bound" || t.subject.namespace !== namespace) continue;
    const claim = t.detail?.["claim"] ?? "";
    const volume = t.detail?.["volume"] ?? "";
    if (!claims.has(claim) || volume === "") continue;
    if (t.atMs < faultAtMs) before.set(claim, volume);
    else if (!later.has(claim)) later.set(claim, volume);
  }
  return new Set([...claims].flatMap((claim) => before.get(claim) ?? later.get(claim) ?? []));
}

/** The claims of the workload's lost pods, and every pod of the workload by uid and by name. */
function podsAndClaims(
  transitions: readonly Transition[],
  workload: WorkloadRef,
  lostPods: ReadonlySet<string | undefined>,
): { claims: Set<string>; uids: Set<string>; names: Set<string> } {
  const claims = new Set<string>();
  const uids = new Set<string>();
  const names = new Set<string>();
  for (const t of transitions) {
    if (!isPodOf(workload, t)) continue;
    if (t.subject.uid !== undefined) uids.add(t.subject.uid);
    names.add(t.subject.name);
    if (lostPods.has(t.subject.uid)) for (const claim of t.pod?.claims ?? []) claims.add(claim);
  }
  return { claims, uids, names };
}

/**
 * `<id>:multi-attach` (a pod of the workload refused its volume), `<id>:va-detach-started`,
 * `<id>:va-gone` (the first of its lost pods' VolumeAttachments on the lost node to start
 * detaching, to be gone) and `<id>:va-attached-elsewhere` (that volume attached to another node):
 * the global milestones' meaning, for this workload's volumes only.
 */
export function workloadVolumeMilestones(
  d: Derivation,
  workload: WorkloadRef,
  lostPods: ReadonlySet<string | undefined>,
): void {
  const { index, after, onFaulted, add } = d;
  const { id, namespace } = workload;
  const { claims, uids, names } = podsAndClaims(index.ofKind("Pod"), workload, lostPods);
  add(
    `${id}:multi-attach`,
    after("event").find((t) => {
      if (!isMultiAttachEvent(t) || t.detail?.["involvedNamespace"] !== namespace) return false;
      const uid = t.detail["involvedUid"] ?? "";
      return uid !== "" ? uids.has(uid) : names.has(t.detail["involvedName"] ?? "");
    }),
  );
  const volumes = boundVolumes(index.named("pvc-bound"), namespace, claims, d.context.faultAtMs);
  const ofVolumes = (t: Transition) => volumes.has(t.detail?.["volume"] ?? "");
  // A VolumeAttachment with no finalizer goes in one step: its deletion is the detach's start then.
  add(
    `${id}:va-detach-started`,
    d
      .afterOfKind("VolumeAttachment")
      .find(
        (t) => (t.name === "va-deletion-requested" || t.name === "va-gone") && onFaulted(t) && ofVolumes(t),
      ),
  );
  const vaGone = after("va-gone").find((t) => onFaulted(t) && ofVolumes(t));
  add(`${id}:va-gone`, vaGone);
  if (vaGone) {
    const volume = vaGone.detail?.["volume"];
    add(
      `${id}:va-attached-elsewhere`,
      after("va-attached").find((t) => !onFaulted(t) && t.detail?.["volume"] === volume),
    );
  }
}
