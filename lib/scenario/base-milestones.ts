// Milestones every scenario gets from its recorded transitions: the node-loss ones for the primary
// node, the lost node's pressure conditions, the pods the kubelet ended itself, and any fence.
import { deriveNodeLossMilestones, type Milestone } from "../observe/milestones.js";
import type { Transition } from "../observe/types.js";
import type { DeriveContext, ScenarioDefinition } from "./harness.js";

/** Pressure conditions turning True or False; a lost node's conditions going Unknown (and back) are noise here. */
function conditionMilestone(t: Transition, lostNode: string): string | undefined {
  if (t.name !== "node-condition" || t.node !== lostNode || t.detail?.["type"] === "Ready") return undefined;
  const unknown = t.detail?.["status"] === "Unknown" || t.detail?.["from"] === "Unknown";
  if (unknown) return undefined;
  return `node-condition:${t.detail?.["type"] ?? ""}:${t.detail?.["status"] ?? ""}`;
}

/** Pods the kubelet ended itself, by reason and app: "evicted:<app>", "terminated:<app>". */
function kubeletEndedMilestone(t: Transition, namespace: string): string | undefined {
  if (t.name !== "pod-terminal" || t.subject.namespace !== namespace || !t.detail?.["reason"])
    return undefined;
  return `${(t.detail["reason"] ?? "").toLowerCase()}:${t.detail["app"] ?? ""}`;
}

/** Any fence anywhere (the "must not fence" scenarios assert this never happens). */
function anyFenceMilestone(t: Transition): string | undefined {
  return t.name === "event" && t.detail?.["reason"] === "FenceStarted"
    ? "any-node:event:FenceStarted"
    : undefined;
}

/** Milestones every scenario gets: node-loss ones for the primary node, conditions, kubelet terminations. */
export function baseMilestones(
  definition: ScenarioDefinition,
  transitions: readonly Transition[],
  context: DeriveContext,
): Milestone[] {
  const { faultAtMs, namespace } = context;
  const lostNode = context.faultNodes[0] ?? "";
  const milestones = deriveNodeLossMilestones(transitions, {
    faultAtMs,
    lostNode,
    faultNodes: context.faultNodes,
    workloads: definition.workloads(namespace),
  });
  const seen = new Set(milestones.map((m) => m.name));
  const add = (name: string | undefined, t: Transition) => {
    if (name === undefined || seen.has(name)) return;
    seen.add(name);
    milestones.push({ name, atMs: t.atMs - faultAtMs, ...(t.node ? { node: t.node } : {}) });
  };
  for (const t of transitions) {
    if (t.atMs < faultAtMs) continue;
    add(conditionMilestone(t, lostNode), t);
    add(kubeletEndedMilestone(t, namespace), t);
    add(anyFenceMilestone(t), t);
  }
  return milestones;
}
