// Milestones every scenario gets from its recorded transitions: the node-loss ones for the primary
// node, the lost node's pressure conditions, the pods the kubelet ended itself, and any fence; with
// several fault nodes, each one's own node milestones too, qualified "<name>@<node>".
import { deriveNodeLossMilestones, deriveOneNodeMilestones, type Milestone } from "../observe/milestones.js";
import { qualifiedMilestone } from "../observe/milestone-names.js";
import { fromTime, indexOf, type TransitionIndex } from "../observe/transition-log.js";
import type { Transition } from "../observe/types.js";
import type { DeriveContext, ScenarioDefinition } from "./harness-types.js";

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

/** `node`'s pressure conditions from the fault on, each name once (the first). */
function conditionMilestones(index: TransitionIndex, faultAtMs: number, node: string): Milestone[] {
  const out: Milestone[] = [];
  for (const t of fromTime(index.onNode(node), faultAtMs)) {
    const name = conditionMilestone(t, node);
    if (name !== undefined && !out.some((m) => m.name === name))
      out.push({ name, atMs: t.atMs - faultAtMs, node });
  }
  return out;
}

/**
 * Each fault node's own milestones, "<name>@<node>", when the fault hit several (with one, the
 * unqualified names are that node's already): its renewal, Ready, taints, volumes, Events, fence
 * and pressure conditions (deriveOneNodeMilestones).
 */
export function perNodeMilestones(index: TransitionIndex, context: DeriveContext): Milestone[] {
  const { faultAtMs, faultNodes } = context;
  if (faultNodes.length < 2) return [];
  return faultNodes.flatMap((node) =>
    [...deriveOneNodeMilestones(index, faultAtMs, node), ...conditionMilestones(index, faultAtMs, node)].map(
      (m) => ({ ...m, name: qualifiedMilestone(m.name, node) }),
    ),
  );
}

/** Milestones every scenario gets: node-loss ones for the primary node, conditions, kubelet terminations. */
export function baseMilestones(
  definition: ScenarioDefinition,
  transitions: readonly Transition[] | TransitionIndex,
  context: DeriveContext,
): Milestone[] {
  const index = indexOf(transitions);
  const { faultAtMs, namespace } = context;
  const lostNode = context.faultNodes[0] ?? "";
  const milestones = deriveNodeLossMilestones(index, {
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
  for (const t of fromTime(index.onNode(lostNode), faultAtMs)) add(conditionMilestone(t, lostNode), t);
  for (const t of fromTime(index.named("pod-terminal"), faultAtMs))
    add(kubeletEndedMilestone(t, namespace), t);
  for (const t of fromTime(index.named("event"), faultAtMs)) add(anyFenceMilestone(t), t);
  return [...milestones, ...perNodeMilestones(index, context)];
}
