// One incident of bench/controller.ts: stop some sim workers at once, wait for the controller's
// decision on each (its Events), read their last Lease renewals, let the fences it started reach
// recovery, start the nodes again and wait until every fence has finished and every node renews,
// so the next incident starts from a calm cluster. The process's CPU and RSS are measured over it.
import { loadavg } from "node:os";
import type { RecoveryController } from "../lib/controller/controller.js";
import {
  isFinished,
  NODE_FENCE_GROUP,
  NODE_FENCE_PLURAL,
  NODE_FENCE_VERSION,
  type NodeFence,
} from "../lib/controller/fence-state.js";
import { SimCluster } from "../lib/cluster/sim/cluster.js";
import { RekindleError } from "../lib/errors.js";
import { k8s } from "../lib/kube/client.js";
import { pollUntil, sleep } from "../lib/util/time.js";
import type { ControllerEvents } from "./controller-events.js";
import {
  attributeDecisions,
  logMarks,
  summarizeDecisions,
  type Decision,
  type DecisionRules,
  type DecisionSummary,
  type LogLine,
  type LostNode,
} from "./decisions.js";
import { startWindow, type WindowUsage } from "./process-window.js";

/** The waits of an incident, in ms. */
export interface IncidentTimeouts {
  /** For every stopped node's decision (past unhealthyAfter and node-monitor-grace-period). */
  decisionsMs: number;
  /** For the fences started to reach recovery (powered off, tainted, cleaned up) before nodes return. */
  fencedMs: number;
  /** For every fence to finish and every node to renew again after the nodes return. */
  restoredMs: number;
}

export interface IncidentContext {
  cluster: SimCluster;
  kc: k8s.KubeConfig;
  controller: RecoveryController;
  events: ControllerEvents;
  /** The controller's log lines (controller-sim.ts). */
  logLines: readonly LogLine[];
  rules: DecisionRules;
  timeouts: IncidentTimeouts;
  progress: (message: string) => void;
  signal: AbortSignal;
}

export interface IncidentResult {
  what: string;
  nodes: string[];
  /** The machine's 1-minute load average when the incident began (other work skews the timings). */
  loadAverage: number;
  /** From the first stop to the last. */
  stopSpreadMs: number;
  /** The process over the whole incident: stops, decisions, fences, return and recovery. */
  usage: WindowUsage;
  lost: LostNode[];
  decisions: Decision[];
  summary: DecisionSummary;
  /**
   * Nodes the bench had to power on again after they returned: the controller fenced them once
   * more because they were silent past unhealthyAfter after their return (on a loaded machine a
   * shared kwok re-takes hundreds of returned nodes late). An operator would power them on; the
   * bench does, so the next incident starts calm. Empty when none.
   */
  poweredOnAgain: string[];
}

/** How often the wait for the fences to finish powers on nodes fenced after their return. */
const POWER_ON_AGAIN_EVERY_MS = 30_000;

/**
 * Waits until every NodeFence has finished; meanwhile, every POWER_ON_AGAIN_EVERY_MS, powers on
 * the incident's nodes whose fence is unfinished and whose power is off (see poweredOnAgain).
 */
async function untilFencesFinish(
  context: IncidentContext,
  what: string,
  nodes: readonly string[],
): Promise<string[]> {
  const { cluster, kc, timeouts, progress, signal } = context;
  const ours = new Set(nodes);
  const poweredOnAgain = new Set<string>();
  let lastPowerOnAt = Date.now();
  await pollUntil(
    async () => {
      const unfinished = (await nodeFences(kc)).filter((f) => !isFinished(f.status));
      if (unfinished.length === 0) return true;
      if (Date.now() - lastPowerOnAt >= POWER_ON_AGAIN_EVERY_MS) {
        lastPowerOnAt = Date.now();
        for (const fence of unfinished) {
          const node = fence.spec.node;
          // Opened afresh: the state as the controller's driver left it (this context's copy is older).
          const running = SimCluster.open(cluster.layout.root).nodeRunning(node);
          if (!ours.has(node) || running !== false) continue;
          progress(
            `${what}: ${node} was fenced after its return (${fence.status?.message ?? ""}); powering it on`,
          );
          await cluster.startNode(node);
          poweredOnAgain.add(node);
        }
      }
      return undefined;
    },
    { what: `the fences of ${what} to finish`, timeoutMs: timeouts.restoredMs, intervalMs: 1000, signal },
  );
  return [...poweredOnAgain].sort();
}

async function nodeFences(kc: k8s.KubeConfig): Promise<NodeFence[]> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const list = (await api.listClusterCustomObject({
    group: NODE_FENCE_GROUP,
    version: NODE_FENCE_VERSION,
    plural: NODE_FENCE_PLURAL,
  })) as { items?: NodeFence[] };
  return list.items ?? [];
}

/** Waits until the controller has seen every node renew (a fresh one knows nothing of earlier renewals). */
export async function waitForObserved(context: IncidentContext, timeoutMs: number): Promise<void> {
  await pollUntil(
    () => Promise.resolve((context.controller.unobservedNodes() ?? ["?"]).length === 0 || undefined),
    { what: "the controller to see every node renew", timeoutMs, intervalMs: 500, signal: context.signal },
  );
}

async function lastRenewals(
  kc: k8s.KubeConfig,
  nodes: readonly string[],
  stoppedAt: Map<string, number>,
  recordedAtMs: number,
): Promise<LostNode[]> {
  const api = kc.makeApiClient(k8s.CoordinationV1Api);
  const leases = new Map(
    (await api.listNamespacedLease({ namespace: "kube-node-lease" })).items.map((l) => [
      l.metadata?.name ?? "",
      l,
    ]),
  );
  return nodes.flatMap((node) => {
    const spec = leases.get(node)?.spec;
    const renewed = spec?.renewTime;
    if (renewed === undefined || spec?.leaseDurationSeconds === undefined) return [];
    return [
      {
        node,
        stoppedAtMs: stoppedAt.get(node) ?? 0,
        recordedAtMs,
        lastRenewalMs: new Date(renewed).getTime(),
        renewIntervalMs: (spec.leaseDurationSeconds * 1000) / 4,
      },
    ];
  });
}

/** Waits until every one of `nodes` renewed its Lease since `sinceMs`, and the controller had two checks to see it. */
async function waitForRenewals(
  context: IncidentContext,
  nodes: readonly string[],
  sinceMs: number,
): Promise<void> {
  const api = context.kc.makeApiClient(k8s.CoordinationV1Api);
  const wanted = new Set(nodes);
  await pollUntil(
    async () => {
      const leases = (await api.listNamespacedLease({ namespace: "kube-node-lease" })).items;
      const renewed = leases.filter(
        (l) => wanted.has(l.metadata?.name ?? "") && new Date(l.spec?.renewTime ?? 0).getTime() >= sinceMs,
      );
      return renewed.length === wanted.size || undefined;
    },
    {
      what: "the returned nodes to renew their Leases",
      timeoutMs: context.timeouts.restoredMs,
      intervalMs: 1000,
      signal: context.signal,
    },
  );
  await sleep(2 * context.rules.checkIntervalMs, context.signal);
}

/** Stops `nodes` (in one batch), measures, restores. */
export async function runIncident(
  context: IncidentContext,
  what: string,
  nodes: readonly string[],
): Promise<IncidentResult> {
  const { cluster, kc, events, rules, timeouts, progress, signal } = context;
  await cluster.waitForZonesNormal(signal);
  await waitForObserved(context, timeouts.restoredMs);
  const loadAverage = Math.round((loadavg()[0] ?? 0) * 10) / 10;
  const window = startWindow();
  const stoppedAt = new Map<string, number>();
  const firstStopAt = Date.now();
  // In one batch (a zone outage is one event): one node after another took about a minute for a
  // third of a thousand-node sim, and spread the zone's decisions over that minute.
  await cluster.stopNodes(nodes, { onEach: (node) => stoppedAt.set(node, Date.now()) });
  // The batch is written to the sim's state file once, as stopNodes returns.
  const recordedAt = Date.now();
  const stopSpreadMs = recordedAt - firstStopAt;
  progress(
    `${what}: stopped ${nodes.length} node(s) in ${stopSpreadMs} ms; waiting for the controller's decisions`,
  );
  const pending = (): LostNode[] =>
    nodes.map((node) => ({
      node,
      stoppedAtMs: stoppedAt.get(node) ?? 0,
      lastRenewalMs: 0,
      renewIntervalMs: 0,
    }));
  const decidedCount = () => attributeDecisions(pending(), events.received, rules).length;
  await pollUntil(() => Promise.resolve(decidedCount() === nodes.length || undefined), {
    what: `the controller's decisions on ${what}`,
    timeoutMs: timeouts.decisionsMs,
    intervalMs: 250,
    signal,
    onWait: () => {
      progress(`${what}: ${decidedCount()}/${nodes.length} decided`);
    },
  }).catch((error: unknown) => {
    if (!(error instanceof RekindleError && error.code === "TIMEOUT")) throw error;
    progress(`${what}: ${error.message}; going on with the nodes decided`);
  });
  // Before any node returns: a stopped node's Lease keeps its last renewal until then.
  const lost = await lastRenewals(kc, nodes, stoppedAt, recordedAt);
  const decisions = attributeDecisions(lost, events.received, rules, logMarks(context.logLines));
  const stopped = new Set(nodes);
  progress(`${what}: waiting for the fences started to reach recovery before the nodes return`);
  await pollUntil(
    async () =>
      (await nodeFences(kc)).every(
        (f) => !stopped.has(f.spec.node) || isFinished(f.status) || f.status?.step === "recovery",
      ) || undefined,
    {
      what: `the fences of ${what} to reach recovery`,
      timeoutMs: timeouts.fencedMs,
      intervalMs: 1000,
      signal,
    },
  ).catch((error: unknown) => {
    // The guard holds fences under way too: in a zone lost past maxUnhealthy they wait for its
    // nodes to return, which is what comes next.
    if (!(error instanceof RekindleError && error.code === "TIMEOUT")) throw error;
    progress(`${what}: ${error.message}; the nodes return with fences not in recovery (held by the guard)`);
  });
  const startedAt = Date.now();
  await cluster.startNodes(nodes);
  progress(`${what}: nodes started again; waiting for every fence to finish and every node to renew`);
  const poweredOnAgain = await untilFencesFinish(context, what, nodes);
  await waitForRenewals(context, nodes, startedAt);
  await cluster.waitForZonesNormal(signal);
  await waitForObserved(context, timeouts.restoredMs);
  const usage = window.stop();
  return {
    what,
    nodes: [...nodes],
    loadAverage,
    stopSpreadMs,
    usage,
    lost,
    decisions,
    summary: summarizeDecisions(lost, decisions),
    poweredOnAgain,
  };
}
