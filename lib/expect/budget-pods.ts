// The budgets read from a workload's pods, replaying their recorded transitions: how many of its
// wanted replicas were not Ready at worst, the first of its pods evicted, and two incarnations of
// one pod Ready at once on different nodes. Ready is the API's view, as Services and controllers
// see it: a pod is Ready from its pod-ready until its deletion is requested, it ends or it goes,
// or its node's Ready condition leaves True (the node lifecycle controller then marks its pods
// not Ready); it is Ready again at its next pod-ready.
import { firstReadyOnTwoNodes } from "../observe/duplicate-ready.js";
import type { Transition } from "../observe/types.js";
import { podKey } from "../observe/workload-ref.js";

/** A workload as the pod budgets see it. */
export interface BudgetWorkload {
  /** Its id: the milestone prefix (`<id>:recovered`) and the name budgets use. */
  id: string;
  namespace: string;
  /** The pod labels that select its pods. */
  matchLabels: Readonly<Record<string, string>>;
  /** Replicas it wants (spec.replicas, a DaemonSet's nodes, 1 for a bare pod). */
  wanted: number;
}

/** The labels of the pod a transition concerns (every label, as the recorder keeps them in `pod`). */
export function podLabels(t: Transition): Readonly<Record<string, string>> {
  if (t.pod !== undefined) return t.pod.labels;
  // Transitions recorded before pods carried their labels: the app label only.
  const app = t.detail?.["app"];
  return app === undefined || app === "" ? {} : { app };
}

/**
 * Whether `t` concerns a pod of `workload`: its namespace, and every label of its selector. A
 * selector on a label the transitions do not carry (see podLabels) matches no pod, so its pod
 * budgets say "no pod of it seen" rather than judge the wrong pods.
 */
export function isPodOf(t: Transition, workload: BudgetWorkload): boolean {
  if (t.subject.kind !== "Pod" || t.subject.namespace !== workload.namespace) return false;
  const labels = podLabels(t);
  const selector = Object.entries(workload.matchLabels);
  return selector.length > 0 && selector.every(([key, value]) => labels[key] === value);
}

/** A node's Ready condition leaving True: its pods are no longer Ready as the API sees them. */
function isNodeReadyLost(t: Transition): boolean {
  return t.name === "node-condition" && t.detail?.["type"] === "Ready" && t.detail["status"] !== "True";
}

interface PodReadiness {
  node: string;
  ready: boolean;
}

/** One transition's effect on the workload's pods (those of other workloads are filtered out before). */
function applyReadiness(pods: Map<string, PodReadiness>, t: Transition): void {
  if (t.name === "node-condition") {
    for (const pod of pods.values()) if (pod.node === t.node) pod.ready = false;
    return;
  }
  const key = podKey(t);
  if (t.name === "pod-gone") {
    pods.delete(key);
    return;
  }
  const pod = pods.get(key) ?? { node: "", ready: false };
  if (t.node !== undefined && t.node !== "") pod.node = t.node;
  if (t.name === "pod-ready") pod.ready = true;
  if (t.name === "pod-deletion-requested" || t.name === "pod-terminal") pod.ready = false;
  pods.set(key, pod);
}

function byTime(transitions: readonly Transition[]): Transition[] {
  return [...transitions].sort((a, b) => a.atMs - b.atMs);
}

/**
 * The most replicas of `workload` not Ready at once (wanted − Ready, at least 0) from the fault to
 * the last transition, and when (ms since the fault) it first came to that; undefined when no pod
 * of it was seen. Transitions of one instant count together (a relist reports a pod gone and its
 * replacement Ready at once).
 */
export function maxUnavailable(
  transitions: readonly Transition[],
  faultAtMs: number,
  workload: BudgetWorkload,
): { count: number; atMs: number } | undefined {
  const relevant = byTime(transitions.filter((t) => isPodOf(t, workload) || isNodeReadyLost(t)));
  if (!relevant.some((t) => isPodOf(t, workload))) return undefined;
  const pods = new Map<string, PodReadiness>();
  let worst: { count: number; atMs: number } | undefined;
  const observe = (atMs: number) => {
    const ready = [...pods.values()].filter((p) => p.ready).length;
    const count = Math.max(0, workload.wanted - ready);
    if (worst === undefined || count > worst.count) worst = { count, atMs: atMs - faultAtMs };
  };
  let i = 0;
  // The state just before the fault, then after each instant that changed something.
  for (; i < relevant.length && (relevant[i]?.atMs ?? Infinity) < faultAtMs; i++)
    applyReadiness(pods, relevant[i] as Transition);
  observe(faultAtMs);
  while (i < relevant.length) {
    const at = (relevant[i] as Transition).atMs;
    for (; i < relevant.length && relevant[i]?.atMs === at; i++)
      applyReadiness(pods, relevant[i] as Transition);
    observe(at);
  }
  return worst;
}

/** Something that happened to the workload, ms since the fault, in words for its budget line. */
export interface Happened {
  atMs: number;
  what: string;
}

/** How one pod transition after the fault evicted it, if it did. */
function evictionOf(t: Transition, faultNodes: readonly string[]): string | undefined {
  const onFaulted = t.node !== undefined && faultNodes.includes(t.node);
  if (t.name === "pod-terminal") {
    const reason = t.detail?.["reason"] ?? "";
    if (reason === "Evicted") return `${t.subject.name} evicted`;
    // Ended by the kubelet of a faulted node (a graceful shutdown's "Terminated").
    if (onFaulted)
      return `${t.subject.name} ended (${reason || t.detail?.["phase"] || "terminal"}) on ${t.node}`;
  }
  if (t.name === "pod-deletion-requested" && onFaulted) return `${t.subject.name} deleted on ${t.node}`;
  return undefined;
}

/**
 * The first pod of `workload` evicted after the fault: ended by the kubelet as Evicted (pressure),
 * or ended or its deletion requested while on a node the fault hit (the taint manager, a drain,
 * the controller, a graceful shutdown).
 */
export function firstEviction(
  transitions: readonly Transition[],
  faultAtMs: number,
  faultNodes: readonly string[],
  workload: BudgetWorkload,
): Happened | undefined {
  for (const t of byTime(transitions)) {
    if (t.atMs < faultAtMs || !isPodOf(t, workload)) continue;
    const what = evictionOf(t, faultNodes);
    if (what !== undefined) return { atMs: t.atMs - faultAtMs, what };
  }
  return undefined;
}

/** Two incarnations of one identity Ready at once on different nodes (firstReadyOnTwoNodes's rule). */
export function readyOnTwoNodes(
  transitions: readonly Transition[],
  faultAtMs: number,
  workload: BudgetWorkload,
): { seen: boolean; happened?: Happened } {
  const { seen, found } = firstReadyOnTwoNodes(transitions, faultAtMs, {
    id: workload.id,
    isPod: (t) => isPodOf(t, workload),
    singleReplica: workload.wanted <= 1,
  });
  if (found === undefined) return { seen };
  const who = found.identity === workload.id ? "" : `${found.identity} `;
  return {
    seen,
    happened: { atMs: found.atMs - faultAtMs, what: `${who}Ready on ${found.nodes.join(" and ")}` },
  };
}
