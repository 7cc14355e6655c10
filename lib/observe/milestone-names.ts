// The names the recorder can produce, whatever the scenario: what deriveNodeLossMilestones
// (milestones.ts) derives for the lost node and each watched workload, what the harness adds for
// every scenario (conditions, kubelet terminations, any fence), and forced detaches read from
// kube-controller-manager's log (forced-detach.ts) with the zone states (zone-states.ts). When the fault hit several nodes, each one's
// node milestones come again qualified by the node, "<name>@<node>" (node-ready-unknown@worker-2).
// A scenario's own marks and derived milestones come on top (ScenarioDefinition.ownMilestones). An
// expected window naming anything else could never be met, or a "must not happen" could never fail.

/** The milestones each fault node gets of its own, qualified by it, when the fault hit several. */
const PER_NODE_FIXED = new Set([
  "last-lease-renewal",
  "node-ready-unknown",
  "node-not-ready",
  "node-ready-again",
  "volumes-in-use-changed",
  "volumes-in-use-cleared",
  "va-detach-started",
  "va-gone",
  "va-attached-elsewhere",
]);

/** Every fixed name: the fault, the node milestones (of the lost node, unqualified), the volume ones, any fence start. */
const FIXED = new Set(["fault-injected", ...PER_NODE_FIXED, "multi-attach", "any-node:event:FenceStarted"]);

/** Per watched workload: `<workload id>:<suffix>`. */
export const WORKLOAD_MILESTONE_SUFFIXES = [
  "pod-deletion-requested",
  "pod-terminated",
  "pod-gone",
  "replacement-created",
  "replacement-scheduled",
  "replacement-running",
  "replacement-ready",
  "recovered",
  /** The replacement's volume setup refused by a known transient race; the kubelet retries. */
  "kubelet-retry",
  /** A pod of it evicted by the kubelet (node pressure), on any node. */
  "pod-evicted",
  /** Two of its pods Ready at once on different nodes (split brain). */
  "duplicate-ready",
  /** Two copies of it writing to its volume at once, from the writer workload's log (two-writers.ts). */
  "two-writers",
  // The global volume milestones, for the volumes of this workload's lost pods only.
  "multi-attach",
  "va-detach-started",
  "va-gone",
  "va-attached-elsewhere",
  // Its Service's EndpointSlices: fewer ready endpoints than wanted, then the wanted number again.
  "endpoints-lost",
  "serving",
  // Its in-cluster probe (a scenario file's `probe`): not answering after the fault, then answering again.
  "probe-failing",
  "answering",
] as const;

const PATTERNS: readonly RegExp[] = [
  /^taint-(added|removed):[a-z0-9.-]+(\/[a-z0-9.-]+)?$/,
  // Events on the lost node or the scenario's namespace, by reason (CamelCase, as Kubernetes writes them).
  /^event:[A-Z][A-Za-z]+$/,
  /^fence:(isolation|power-management|taint|cleanup|recovery):(new|running|done|error)$/,
  /^node-condition:[A-Za-z]+:(True|False)$/,
  // Pods the kubelet ended itself, by reason and app label.
  /^(evicted|terminated):[a-z0-9-]+$/,
  /^forced-detach:(timeout|out-of-service)$/,
  // The node lifecycle controller's zone states, from the same log (zone-states.ts).
  /^zone-state:[A-Za-z0-9_.-]*:(Initial|Normal|PartialDisruption|FullDisruption)$/,
  /^disruption-mode:(entered|exited)$/,
];

/** Of PATTERNS, those of one node: taints, its Events, its fence, its conditions, its forced detaches. */
const PER_NODE_PATTERNS: readonly RegExp[] = PATTERNS.filter(
  (pattern) =>
    !["evicted:x", "terminated:x", "zone-state:x:Normal", "disruption-mode:entered"].some((name) =>
      pattern.test(name),
    ),
);

/** A Kubernetes node name (an RFC 1123 subdomain). */
const NODE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** One fault node's own milestone: "<name>@<node>" (see the file comment). */
export function qualifiedMilestone(name: string, node: string): string {
  return `${name}@${node}`;
}

function isPerNodeName(name: string): boolean {
  const at = name.lastIndexOf("@");
  if (at <= 0 || !NODE_NAME.test(name.slice(at + 1))) return false;
  const base = name.slice(0, at);
  return PER_NODE_FIXED.has(base) || PER_NODE_PATTERNS.some((pattern) => pattern.test(base));
}

/** The node of a fault node's own milestone ("node-ready-unknown@worker-2" → "worker-2"), else undefined. */
export function nodeOfQualified(name: string): string | undefined {
  return isPerNodeName(name) ? name.slice(name.lastIndexOf("@") + 1) : undefined;
}

/** Whether the recorder can produce `name` for a scenario watching these workloads. */
export function isRecordedMilestoneName(name: string, workloadIds: readonly string[]): boolean {
  if (FIXED.has(name) || PATTERNS.some((pattern) => pattern.test(name))) return true;
  if (isPerNodeName(name)) return true;
  const separator = name.lastIndexOf(":");
  const workload = name.slice(0, separator);
  const suffix = name.slice(separator + 1);
  return (
    workloadIds.includes(workload) && (WORKLOAD_MILESTONE_SUFFIXES as readonly string[]).includes(suffix)
  );
}
