// Faults the kubelet handles itself, on a node that stays up: a graceful shutdown (it ends every
// pod within shutdownGracePeriod, regular pods before critical ones) and memory or disk pressure
// (it evicts one pod per monitoring interval in its order: over-request first, then by priority,
// then by how far usage exceeds the request, critical pods never; lib/kube/eviction-order.ts).
import {
  kubeletEvictionOrder,
  type EvictionCandidate,
  type StarvedResource,
} from "../kube/eviction-order.js";
import { SHUTDOWN_NOT_READY_MS } from "./node-windows.js";
import { FAULT } from "./timeline-builder.js";
import type { LossContext, PressureRanking, RankedPod } from "./workload-context.js";
import type { WorkloadFacts } from "./workload-facts.js";
import { nodeLocalAfterPressure, notBackWithinRun } from "./workload-node-local.js";
import { neverReplaced, replacer, servingNote } from "./workload-return.js";

/** After an eviction the kubelet waits for the pod's cleanup (up to 30 s) before the next one. */
export const POD_CLEANUP_WAIT_MS = 30_000;

const seconds = (ms: number) => `${ms / 1000} s`;

/** A replacement of a pod the kubelet ended: how long from its end to Ready elsewhere. */
function restartMs(x: LossContext, extraMs: number): number {
  const k = x.s.knobs;
  return k.podStartMs + extraMs + (x.f.volume === "rwo-attach" ? k.attachMs + 5_000 : 0);
}

export function gracefulShutdownWindows(x: LossContext): void {
  const { b, f, s } = x;
  const share = s.eviction.shutdownGracePeriodMs;
  const grace = f.terminationGracePeriodMs;
  const bound = f.critical ? share : Math.min(grace, share);
  b.window(
    `${f.id}:pod-terminated`,
    FAULT,
    0,
    bound,
    f.critical
      ? `critical (priority ${f.priority}): ended after the regular pods, within shutdownGracePeriod (${seconds(share)})`
      : `the kubelet ends regular pods first (critical ones after), each within the tighter of its grace (${seconds(grace)}) and shutdownGracePeriod (${seconds(share)})`,
  );
  if (f.replacement === "never") {
    neverReplaced(x);
    return;
  }
  if (f.volume === "node-local") {
    notBackWithinRun(x, "the node stays shut down for the rest of the run", servingNote(f, s.lostPods));
    return;
  }
  const volume = f.volume === "rwo-attach" ? "; the unmounted volume detaches and attaches elsewhere" : "";
  const note = servingNote(f, s.lostPods);
  const race = notReadyEviction(x);
  if (race !== undefined && race.minMs < bound) {
    b.window(
      `${f.id}:recovered`,
      FAULT,
      0,
      Math.min(bound, race.maxMs) + restartMs(x, 5_000),
      `${replacer(f)} replaces it at the earlier of its end and its deletion after the not-ready toleration (${seconds(race.minMs)}); ${note}`,
    );
    return;
  }
  b.window(
    `${f.id}:recovered`,
    `${f.id}:pod-terminated`,
    0,
    restartMs(x, 5_000),
    `${replacer(f)} replaces a terminated pod at once, on another node (this one is tainted not-ready)${volume}; ${note}`,
  );
}

/**
 * A workload replaced at its deletion request, with no volume to wait for, may be replaced before
 * the kubelet has ended its pod: the not-ready NoExecute taint (at the node lifecycle controller's
 * next pass after NotReady, rate-limited) evicts it after its own not-ready toleration. Its bounds
 * since the fault, or undefined when that cannot come first.
 */
function notReadyEviction(x: LossContext): { minMs: number; maxMs: number } | undefined {
  const { f, s } = x;
  const tol = f.notReadyTolerationMs;
  if (tol === null || f.replacement !== "at-deletion" || f.volume === "rwo-attach") return undefined;
  const k = s.knobs;
  return { minMs: tol, maxMs: SHUTDOWN_NOT_READY_MS + k.periodMs + k.evictionGapMs + tol + 1000 };
}

export function starvedResource(fault: "memory-pressure" | "disk-pressure"): StarvedResource {
  return fault === "memory-pressure" ? "memory" : "ephemeral-storage";
}

/** Usage the ranking assumes: the sim's annotation, else some use over a zero request and none over a request. */
function assumedUsage(f: WorkloadFacts, resource: StarvedResource): number {
  return f.usageBytes[resource] ?? (f.requestBytes[resource] === 0 ? 1 : 0);
}

/**
 * The kubelet's eviction order over the scenario's pods on the pressured node (`lostPods` of each
 * workload), with groups of pods that rank equal. Critical workloads are listed apart: never evicted.
 */
export function pressureRanking(
  workloads: readonly { facts: WorkloadFacts; lostPods: number }[],
  resource: StarvedResource,
): PressureRanking {
  const byName = new Map<string, string>();
  const candidates: EvictionCandidate[] = [];
  for (const { facts: f, lostPods } of workloads) {
    if (f.critical) continue;
    for (let i = 0; i < lostPods; i++) {
      const name = `${f.id}#${i}`;
      byName.set(name, f.id);
      candidates.push({
        namespace: "",
        name,
        priority: f.priority,
        requestBytes: f.requestBytes[resource],
        usageBytes: assumedUsage(f, resource),
      });
    }
  }
  const key = (c: EvictionCandidate) =>
    `${c.usageBytes > c.requestBytes}/${c.priority}/${c.usageBytes - c.requestBytes}`;
  const order: RankedPod[] = [];
  let group = -1;
  let last: string | undefined;
  for (const c of kubeletEvictionOrder(candidates)) {
    if (key(c) !== last) group++;
    last = key(c);
    order.push({ id: byName.get(c.name) ?? c.name, group });
  }
  return {
    order,
    critical: workloads.filter((w) => w.facts.critical && w.lostPods > 0).map((w) => w.facts.id),
  };
}

function rankWhy(f: WorkloadFacts, resource: StarvedResource, position: number, tied: boolean): string {
  const over =
    assumedUsage(f, resource) > f.requestBytes[resource]
      ? ", using more than its request"
      : ", within its request";
  const guaranteed =
    f.qos === "Guaranteed"
      ? "; Guaranteed goes last, but a fill that is no pod is not relieved by evictions"
      : "";
  return `${f.qos}, priority ${f.priority}${over}: ${tied ? "among pods ranked equal from " : ""}#${position + 1} in the kubelet's ${resource} eviction order among the scenario's pods on the node${guaranteed}`;
}

export function pressureWindows(x: LossContext, fault: "memory-pressure" | "disk-pressure"): void {
  const { b, f, s } = x;
  const id = f.id;
  const resource = starvedResource(fault);
  const ranking = s.pressureRanking ?? pressureRanking([{ facts: f, lostPods: s.lostPods }], resource);
  if (f.critical || ranking.critical.includes(id)) {
    b.never(
      `${id}:pod-evicted`,
      `critical (priority ${f.priority}): the eviction manager refuses to evict it`,
    );
    return;
  }
  const { monitoringIntervalMs: monitor, statusUpdateIntervalMs: update } = s.eviction;
  const step = monitor + POD_CLEANUP_WAIT_MS;
  const latestAt = (position: number) => monitor + update + position * step;
  const groupOf = (g: number) => {
    const members = ranking.order.map((p, i) => ({ ...p, i })).filter((p) => p.group === g);
    return { start: members[0]?.i ?? 0, end: members[members.length - 1]?.i ?? 0 };
  };
  const first = ranking.order.findIndex((p) => p.id === id);
  const mine = ranking.order[first];
  if (mine === undefined) return;
  const { start, end } = groupOf(mine.group);
  const d = s.durationMs ?? Number.POSITIVE_INFINITY;
  // At most one eviction per monitoring pass: the pods ahead of it take that many passes.
  if (start * monitor > d + monitor) {
    b.never(
      `${id}:pod-evicted`,
      `the pressure is lifted after ${seconds(d)}, before the kubelet reaches it (${start} pod(s) ahead, one eviction per ${seconds(monitor)} pass)`,
    );
    return;
  }
  if (latestAt(end) > d) return;
  const why = rankWhy(f, resource, start, end > start);
  // The pod just before its group ranks strictly ahead (groups are contiguous): anchor on its workload.
  const before = ranking.order[start - 1];
  if (before === undefined)
    b.window(
      `${id}:pod-evicted`,
      FAULT,
      0,
      latestAt(end),
      `${why}; the first pass that sees the signal starts`,
    );
  else {
    const theirs = ranking.order.findIndex((p) => p.id === before.id);
    b.window(
      `${id}:pod-evicted`,
      `${before.id}:pod-evicted`,
      0,
      (end - theirs) * step,
      `${why}; after ${before.id}, one eviction per pass once the last pod is cleaned up (≤ ${seconds(POD_CLEANUP_WAIT_MS)})`,
    );
  }
  if (f.replacement === "never") {
    neverReplaced(x);
    return;
  }
  const replaced = restartMs(x, update + s.knobs.periodMs + 5_000);
  if (f.volume === "node-local") {
    nodeLocalAfterPressure(x, fault, replaced, servingNote(f, s.lostPods));
    return;
  }
  const note = `${replacer(f)} replaces the evicted pod; once the pressure taint is on, elsewhere; ${servingNote(f, s.lostPods)}`;
  if (s.lostPods === 1) b.window(`${id}:recovered`, `${id}:pod-evicted`, 0, replaced, note);
  else
    b.window(
      `${id}:recovered`,
      FAULT,
      0,
      latestAt(end) + replaced,
      `${note} (its last pod evicted by #${end + 1})`,
    );
}
