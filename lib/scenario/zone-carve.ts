// What the zone-disruption scenarios share: a zone carved out of the workers (their zone label
// changed, given back by an undo) and awaited as Normal in kube-controller-manager's log before
// the fault, the Deployment whose pods sit one per judged node, and the per-node milestones of
// the judged nodes (the last ones the fault hit), numbered in time order.
import { RekindleError } from "../errors.js";
import { zoneStateChangesIn, type ZoneStateName } from "../observe/zone-states.js";
import { LogFollower } from "../observe/klog.js";
import { k8s, isPodReady } from "../kube/client.js";
import { ZONE_LABEL } from "../kube/queries.js";
import { applyManifests, RUN_LABEL } from "../kube/apply.js";
import type { Milestone, WorkloadRef } from "../observe/milestones.js";
import type { Transition } from "../observe/types.js";
import { DEPLOYMENT_NAME, listPods } from "../workloads/deploy.js";
import { nameList } from "../util/name-list.js";
import { pollUntil } from "../util/time.js";
import type { DeriveContext, ScenarioContext } from "./harness.js";

export const UNREACHABLE_TAINT = "node.kubernetes.io/unreachable";

/** The workers, worker-2 before worker-10. */
export async function sortedWorkers(context: ScenarioContext): Promise<string[]> {
  const workers = await context.cluster.workerNodes();
  return [...workers].sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
}

/** The first `count` workers, or an UNSUPPORTED error naming the shortfall. */
export async function firstWorkers(context: ScenarioContext, count: number): Promise<string[]> {
  const workers = await sortedWorkers(context);
  if (workers.length < count)
    throw new RekindleError(
      "UNSUPPORTED",
      `this scenario needs ${count} workers; the cluster has ${workers.length}`,
      {
        hint: `rekindle run --provider sim --workers ${count}`,
      },
    );
  return workers.slice(0, count);
}

async function labelZone(core: k8s.CoreV1Api, name: string, zone: string | null): Promise<void> {
  await core.patchNode(
    { name, body: { metadata: { labels: { [ZONE_LABEL]: zone } } } },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
  );
}

/**
 * Waits until kube-controller-manager's log says every one of `zones` is in `state` (lines from
 * `follower`'s start on). The follower hands each line out once, so one poll reads for all zones.
 */
export async function awaitZoneStatesInLog(
  follower: LogFollower,
  zones: readonly string[],
  state: ZoneStateName,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const waiting = new Set(zones);
  await pollUntil(
    () => {
      for (const c of zoneStateChangesIn(follower.readLines()))
        if (c.kind === "zone" && c.state === state) waiting.delete(c.zone);
      return Promise.resolve(waiting.size === 0 ? true : undefined);
    },
    {
      what: `kube-controller-manager to log zone ${nameList(zones, "zones")} ${state}`,
      timeoutMs,
      intervalMs: 200,
      ...(signal ? { signal } : {}),
    },
  );
}

/**
 * Puts `nodes` in a zone of their own (their labels given back by an undo), then waits until the
 * node lifecycle controller has it Normal: it computes zones from the labels at each monitor pass.
 */
export async function carveZone(
  context: ScenarioContext<"controller-manager-flags">,
  zone: string,
  nodes: readonly string[],
): Promise<void> {
  await carveZones(context, new Map([[zone, nodes]]));
}

/** carveZone for several zones at once: every label put, then every zone awaited Normal together. */
export async function carveZones(
  context: ScenarioContext<"controller-manager-flags">,
  zones: ReadonlyMap<string, readonly string[]>,
): Promise<void> {
  const core = context.kc.makeApiClient(k8s.CoreV1Api);
  const nodes = [...zones.values()].flat();
  const labelsBefore = new Map(
    (await core.listNode()).items.map((n) => [n.metadata?.name ?? "", n.metadata?.labels?.[ZONE_LABEL]]),
  );
  context.steps.registerUndo(`give ${nameList(nodes)} their zones back`, async () => {
    for (const name of nodes)
      await labelZone(core, name, labelsBefore.get(name) ?? null).catch(() => undefined);
  });
  const follower = new LogFollower(
    context.cluster.capabilities["controller-manager-flags"].controllerManagerLogPath(),
  );
  const periodMs = context.inputs.profile.nodeMonitorPeriodSeconds * 1000;
  const what =
    zones.size === 1
      ? `put ${nameList(nodes)} in zone ${[...zones.keys()].join("")}, Normal`
      : `put ${nameList(nodes)} in zones ${nameList([...zones.keys()], "zones")}, each Normal`;
  await context.steps.step(what, async () => {
    for (const [zone, members] of zones) for (const name of members) await labelZone(core, name, zone);
    await awaitZoneStatesInLog(follower, [...zones.keys()], "Normal", 3 * periodMs + 30_000, context.signal);
  });
}

/** The Deployment the zone scenarios judge (id "deployment", app "web", as the node-loss families). */
export function zoneWorkloads(namespace: string): WorkloadRef[] {
  return [{ id: "deployment", app: DEPLOYMENT_NAME, namespace }];
}

/** A pause-container Deployment "web" of `nodes.length` pods, one on each of `nodes` (replacements stay Pending). */
function webDeployment(namespace: string, nodes: readonly string[]): k8s.V1Deployment {
  const labels = { app: DEPLOYMENT_NAME, "rekindle.dev/workload": "deployment" };
  const deployment: k8s.V1Deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: DEPLOYMENT_NAME, namespace },
    spec: {
      replicas: nodes.length,
      selector: { matchLabels: { app: DEPLOYMENT_NAME } },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: 30,
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [...nodes] }],
                  },
                ],
              },
            },
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                {
                  topologyKey: "kubernetes.io/hostname",
                  labelSelector: { matchLabels: { app: DEPLOYMENT_NAME } },
                },
              ],
            },
          },
          containers: [
            {
              name: "web",
              image: "registry.k8s.io/pause:3.10.1",
              resources: { requests: { cpu: "100m", memory: "64Mi" } },
            },
          ],
        },
      },
    },
  };
  return deployment;
}

/** Deploys "web" with one pod on each of `nodes` and waits until every one is Ready. */
export async function deployWebOn(context: ScenarioContext, nodes: readonly string[]): Promise<void> {
  const { kc, namespace } = context;
  await context.steps.step(`deploy web, one pod on each of ${nameList(nodes)}`, async () => {
    await applyManifests(kc, [webDeployment(namespace, nodes)], {
      labels: { [RUN_LABEL]: context.cluster.runId },
    });
    await pollUntil(
      async () => {
        const ready = (await listPods(kc, namespace, DEPLOYMENT_NAME)).filter(isPodReady);
        return ready.length >= nodes.length ? true : undefined;
      },
      {
        what: `Deployment ${namespace}/web ${nodes.length} pods Ready`,
        timeoutMs: 120_000,
        ...(context.signal ? { signal: context.signal } : {}),
      },
    );
  });
}

/** The rate-limited taint that evicts (the NoSchedule one of the same key comes at once, unlimited). */
function isUnreachableNoExecute(t: Transition): boolean {
  return t.detail?.["key"] === UNREACHABLE_TAINT && t.detail["effect"] === "NoExecute";
}

/** Waits until every one of `nodes` carries the unreachable NoExecute taint. */
export async function awaitUnreachableTaints(
  context: ScenarioContext,
  nodes: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const core = context.kc.makeApiClient(k8s.CoreV1Api);
  const wanted = new Set(nodes);
  // One LIST a poll, not a GET per node: at a thousand nodes the GETs would load the API server
  // the scenario is timing.
  await pollUntil(
    async () => {
      const tainted = (await core.listNode()).items.filter(
        (n) =>
          wanted.has(n.metadata?.name ?? "") &&
          (n.spec?.taints ?? []).some((t) => t.key === UNREACHABLE_TAINT && t.effect === "NoExecute"),
      );
      return tainted.length === wanted.size ? true : undefined;
    },
    {
      what: `the unreachable NoExecute taint on ${nameList(nodes)}`,
      timeoutMs,
      intervalMs: 1_000,
      ...(context.signal ? { signal: context.signal } : {}),
    },
  );
}

/** One group of nodes stopped at once; a later group is marked at its stop, once `before` returned. */
export interface LossStep {
  nodes: readonly string[];
  mark?: string;
  before?: () => Promise<void>;
}

/**
 * Stops the groups one after another under one fault handle (the fault instant is the first stop;
 * faultStarts lists every node, the judged ones last), each awaited undone by the undo.
 */
export async function loseInSteps(
  context: ScenarioContext<"lifecycle" | "controller-manager-flags">,
  groups: readonly LossStep[],
): Promise<void> {
  const { steps } = context;
  const all = groups.flatMap((g) => g.nodes);
  steps.registerUndo(`wait until ${nameList(all)} are back`, async () => {
    for (const node of all) await context.waitNodeBack(node);
  });
  const outage = await context.faults.begin({
    action: { kind: "stop" },
    nodesHint: all,
    onFirstEffect: () => {
      context.faultStarts(all);
    },
  });
  for (const group of groups) {
    if (group.before) await group.before();
    if (group.mark !== undefined) context.mark(group.mark);
    await steps.step(`stop ${nameList(group.nodes)} at once`, () =>
      outage.apply(group.nodes, { concurrent: true }),
    );
  }
}

/** Awaits the zone's PartialDisruption, as a step. */
export function partialReached(context: ScenarioContext, zone: string): () => Promise<void> {
  return async () => {
    await context.steps.step(`zone ${zone} PartialDisruption`, () =>
      context.awaitMilestone(`zone-state:${zone}:PartialDisruption`),
    );
  };
}

/** The judged nodes: the last `count` of the fault's nodes (faultStarts lists them last). */
export function judgedNodes(context: DeriveContext, count: number): string[] {
  return context.faultNodes.slice(-count);
}

/** The first transition per node that `matches`, in time order, numbered "<prefix>-1", "-2"… */
function numberedPerNode(
  transitions: readonly Transition[],
  context: DeriveContext,
  nodes: readonly string[],
  prefix: string,
  matches: (t: Transition) => boolean,
): Milestone[] {
  const first = new Map<string, Transition>();
  for (const t of transitions) {
    if (t.atMs < context.faultAtMs || t.node === undefined || !nodes.includes(t.node)) continue;
    if (!first.has(t.node) && matches(t)) first.set(t.node, t);
  }
  return [...first.values()]
    .sort((a, b) => a.atMs - b.atMs)
    .map((t, i) => ({
      name: `${prefix}-${i + 1}`,
      atMs: t.atMs - context.faultAtMs,
      ...(t.node ? { node: t.node } : {}),
    }));
}

/**
 * The judged nodes' own milestones, each numbered in time order: "judged-unknown-<i>" (Ready went
 * Unknown), "judged-taint-<i>" (the unreachable NoExecute taint), "judged-eviction-<i>" (the first of its
 * scenario pods whose deletion was requested: evicted by the taint manager).
 */
export function judgedMilestones(
  transitions: readonly Transition[],
  context: DeriveContext,
  count: number,
): Milestone[] {
  const nodes = judgedNodes(context, count);
  return [
    ...numberedPerNode(
      transitions,
      context,
      nodes,
      "judged-unknown",
      (t) =>
        t.name === "node-condition" && t.detail?.["type"] === "Ready" && t.detail["status"] === "Unknown",
    ),
    ...numberedPerNode(
      transitions,
      context,
      nodes,
      "judged-taint",
      (t) => t.name === "taint-added" && isUnreachableNoExecute(t),
    ),
    ...numberedPerNode(
      transitions,
      context,
      nodes,
      "judged-eviction",
      (t) => t.name === "pod-deletion-requested" && t.subject.namespace === context.namespace,
    ),
  ];
}

/**
 * "taints-lifted": the last of the NoExecute unreachable taints put on `nodes` since the fault
 * removed, once every one is; none while any stays (or none was put).
 */
export function taintsLifted(
  transitions: readonly Transition[],
  context: DeriveContext,
  nodes: readonly string[],
): Milestone[] {
  const tainted = new Set<string>();
  const lifted = new Map<string, number>();
  for (const t of transitions) {
    if (t.atMs < context.faultAtMs || t.node === undefined || !nodes.includes(t.node)) continue;
    if (!isUnreachableNoExecute(t)) continue;
    if (t.name === "taint-added") {
      tainted.add(t.node);
      lifted.delete(t.node);
    } else if (t.name === "taint-removed") lifted.set(t.node, t.atMs);
  }
  if (tainted.size === 0 || [...tainted].some((node) => !lifted.has(node))) return [];
  return [{ name: "taints-lifted", atMs: Math.max(...lifted.values()) - context.faultAtMs }];
}

/** The own milestones of a zone scenario with judged nodes. */
export const JUDGED_MILESTONES: readonly RegExp[] = [/^judged-(unknown|taint|eviction)-\d+$/];
