// What every `safety` scenario checks, whatever hostile condition it injects: no reachable node is
// fenced, no out-of-service taint comes before a confirmed fence, one incident gives one
// power-off, and nothing the controller put on a node (taints, fences under way) is left once the
// node is back. Judged from the API (the recorder's transitions) and from the fence driver's own
// power-offs, counted by a wrapper around the provider's driver.
import { FENCING_TAINT, OUT_OF_SERVICE_VALUE, type RecoveryController } from "../controller/controller.js";
import type { ControllerConfig } from "../controller/config.js";
import type { FenceDriver, FenceTarget } from "../controller/drivers/types.js";
import {
  isFinished,
  NODE_FENCE_GROUP,
  NODE_FENCE_PLURAL,
  NODE_FENCE_VERSION,
  type FenceAction,
  type NodeFence,
} from "../controller/fence-state.js";
import { DEFAULT_LEADER_LEASE, LeaderElector } from "../controller/leader.js";
import { ensureNamespace } from "../workloads/deploy.js";
import { never, type ExpectedMilestone } from "../expect/windows.js";
import { k8s } from "../kube/client.js";
import { OUT_OF_SERVICE_TAINT } from "../kube/queries.js";
import type { Milestone } from "../observe/milestones.js";
import type { Transition } from "../observe/types.js";
import { leaseRenewIntervalMs } from "../cluster/profiles.js";
import { waitFencesFinished } from "./fences.js";
import type { DeriveContext, ScenarioContext } from "./harness.js";

/** Milestones the safety checks make: each must never happen. */
export const UNSAFE = {
  fencedReachable: "unsafe:fenced-a-reachable-node",
  taintBeforeFence: "unsafe:out-of-service-before-confirmed-fence",
  secondPowerOff: "unsafe:second-power-off",
  leftBehind: "unsafe:left-behind",
} as const;

/** Power-offs the counting driver saw, numbered: "power-off:1", "power-off:2"… */
export const POWER_OFF_MILESTONE = /^power-off:\d+$/;

/** The own milestones of every safety scenario (add the scenario's own). */
export const SAFETY_MILESTONES: readonly (string | RegExp)[] = [
  ...Object.values(UNSAFE),
  POWER_OFF_MILESTONE,
];

/** The safety invariants as expectations. `powerOffs`: how many power-offs the scenario's incidents allow. */
export function safetyExpectations(powerOffs: number): ExpectedMilestone[] {
  return [
    never(UNSAFE.fencedReachable, "a node the recorder saw renewing its Lease is never fenced"),
    never(UNSAFE.taintBeforeFence, "the out-of-service taint only ever follows a confirmed power-off"),
    never(
      powerOffs === 0 ? "power-off:1" : `power-off:${powerOffs + 1}`,
      powerOffs === 0 ? "nothing is powered off" : `one power-off per incident (${powerOffs})`,
    ),
    never(UNSAFE.leftBehind, "no taint of the controller's and no fence under way once the node is back"),
  ];
}

/** A node's fence is confirmed once past power-off (done, tainted, cleaned); a new fence starts over. */
function trackConfirmedFence(confirmed: Set<string>, node: string, t: Transition): void {
  const { step, phase } = t.detail ?? {};
  const past = step === "taint" || step === "cleanup" || (step === "power-management" && phase === "done");
  if (past) confirmed.add(node);
  if (step === "power-management" && phase === "new") confirmed.delete(node);
}

/**
 * The unsafe moments, from the recorded transitions: a FenceStarted Event for a node the recorder saw
 * renew within half of unhealthyAfter (or two renewal intervals, one with the early power read, the
 * shorter) before it, and an
 * out-of-service taint added to a node whose fence had not reached power-management/done.
 */
export function deriveUnsafe(transitions: readonly Transition[], context: DeriveContext): Milestone[] {
  const out: Milestone[] = [];
  const renewMs = leaseRenewIntervalMs(context.inputs.profile);
  // A node read off early is fenced once it missed one renewal: one that renewed within one
  // renewal interval missed none, so it was reachable.
  const renewals = context.inputs.controller.earlyPowerRead ? 1 : 2;
  const recentMs = Math.min(renewals * renewMs, context.inputs.controller.unhealthyAfterMs / 2);
  const lastRenewal = new Map<string, number>();
  const confirmed = new Set<string>();
  const add = (name: string, t: Transition) => {
    if (t.atMs < context.faultAtMs || out.some((m) => m.name === name)) return;
    out.push({ name, atMs: t.atMs - context.faultAtMs, ...(t.node ? { node: t.node } : {}) });
  };
  for (const t of transitions) {
    const node = t.node ?? "";
    if (t.name === "lease-renewed") lastRenewal.set(node, t.atMs);
    if (t.name === "fence-changed") trackConfirmedFence(confirmed, node, t);
    if (t.name === "event" && t.detail?.["reason"] === "FenceStarted") {
      const renewed = lastRenewal.get(node);
      if (renewed !== undefined && t.atMs - renewed < recentMs) add(UNSAFE.fencedReachable, t);
    }
    if (t.name === "taint-added" && t.detail?.["key"] === OUT_OF_SERVICE_TAINT && !confirmed.has(node)) {
      add(UNSAFE.taintBeforeFence, t);
    }
  }
  return out;
}

/** Wraps a fence driver so each real power-off (a node that was not off) is marked, numbered. */
export function countingFenceDriver(inner: FenceDriver, onPowerOff: (node: string) => void): FenceDriver {
  return {
    name: inner.name,
    async powerOff(target: FenceTarget, signal?: AbortSignal) {
      const before = await inner.powerState(target, signal).catch(() => "unknown" as const);
      await inner.powerOff(target, signal);
      if (before !== "off") onPowerOff(target.node);
    },
    ...(inner.powerOn
      ? {
          powerOn: (target: FenceTarget, signal?: AbortSignal) =>
            inner.powerOn?.(target, signal) ?? Promise.resolve(),
        }
      : {}),
    powerState: (target: FenceTarget, signal?: AbortSignal) => inner.powerState(target, signal),
  };
}

export interface SafetyControllerOptions {
  config?: Partial<ControllerConfig>;
  leader?: LeaderElector;
  haltBefore?: FenceAction | ((action: FenceAction, node: string) => boolean);
  /** Wraps the counting driver (a driver that hangs, say). */
  wrap?: (driver: FenceDriver) => FenceDriver;
}

/**
 * Starts the in-process controller with the provider's fence driver, counted. `powerOffs` is shared
 * by every controller of the scenario, so a second power-off by another replica counts too.
 */
export function startSafetyController(
  context: ScenarioContext<"fencing">,
  powerOffs: { count: number },
  options: SafetyControllerOptions = {},
): Promise<RecoveryController> {
  const counted = countingFenceDriver(context.cluster.capabilities.fencing.fenceDriver(), () => {
    powerOffs.count += 1;
    context.mark(`power-off:${powerOffs.count}`);
  });
  const driver = options.wrap ? options.wrap(counted) : counted;
  return context.startController({
    drivers: new Map([[driver.name, driver]]),
    fenceConfig: { templates: { node: { driver: driver.name } }, defaultTemplate: "node" },
    ...(options.config ? { config: options.config } : {}),
    ...(options.leader ? { leader: options.leader } : {}),
    ...(options.haltBefore ? { haltBefore: options.haltBefore } : {}),
  });
}

/** What the controller left: its taints on any node, fences under way or stuck in deletion. */
export async function controllerLeftovers(kc: k8s.KubeConfig): Promise<string[]> {
  const left: string[] = [];
  for (const node of (await kc.makeApiClient(k8s.CoreV1Api).listNode()).items) {
    for (const taint of node.spec?.taints ?? []) {
      const ours =
        taint.key === FENCING_TAINT ||
        (taint.key === OUT_OF_SERVICE_TAINT && taint.value === OUT_OF_SERVICE_VALUE);
      if (ours) left.push(`taint ${taint.key}=${taint.value ?? ""} on ${node.metadata?.name ?? ""}`);
    }
  }
  const fences = (await kc.makeApiClient(k8s.CustomObjectsApi).listClusterCustomObject({
    group: NODE_FENCE_GROUP,
    version: NODE_FENCE_VERSION,
    plural: NODE_FENCE_PLURAL,
  })) as { items: NodeFence[] };
  for (const fence of fences.items) {
    if (!isFinished(fence.status)) {
      left.push(
        `NodeFence ${fence.metadata.name} at ${fence.status?.step ?? "?"}/${fence.status?.phase ?? "?"}`,
      );
    }
    if (fence.metadata.deletionTimestamp) left.push(`NodeFence ${fence.metadata.name} stuck in deletion`);
  }
  return left;
}

/**
 * The last step of a safety scenario, with every node back: waits for the controller to finish its
 * fences (bounded), then marks UNSAFE.leftBehind if anything of the controller's is left.
 */
export async function checkNothingLeftBehind(context: ScenarioContext): Promise<void> {
  await context.steps.step("check the controller left nothing behind", async () => {
    await waitFencesFinished(context.kc).catch(() => undefined);
    const left = await controllerLeftovers(context.kc);
    if (left.length > 0) {
      context.progress.info(`left behind: ${left.join("; ")}`);
      context.mark(UNSAFE.leftBehind);
    }
  });
}

/**
 * One pause pod bound to each worker, so every node holds something a fence would release. It
 * tolerates every taint, so the taint manager does not evict it when the node lifecycle controller
 * marks a node Unknown (the node would then hold nothing and no fence would be tried at all).
 */
export async function occupyEveryWorker(context: ScenarioContext): Promise<string[]> {
  const workers = await context.cluster.workerNodes();
  const core = context.kc.makeApiClient(k8s.CoreV1Api);
  await context.steps.step(`put a pod on each of ${workers.join(", ")}`, async () => {
    for (const node of workers) {
      await core.createNamespacedPod({
        namespace: context.namespace,
        body: {
          metadata: { name: `occupant-${node}`, labels: { app: "occupant" } },
          spec: {
            nodeName: node,
            terminationGracePeriodSeconds: 0,
            tolerations: [{ operator: "Exists" }],
            containers: [{ name: "pause", image: "registry.k8s.io/pause:3.10.1" }],
          },
        },
      });
    }
  });
  return workers;
}

/** Powers the node back on and waits until it is back (Ready, renewing), as one step. */
export async function powerBackOn(context: ScenarioContext<"lifecycle">, node: string): Promise<void> {
  await context.steps.step(`power ${node} back on`, async () => {
    await context.cluster.capabilities.lifecycle.startNode(node);
    await context.waitNodeBack(node);
  });
}

/** "fence-started-twice" at the second FenceStarted Event after the fault: one incident, one fence. */
export function fenceStartedTwice(transitions: readonly Transition[], faultAtMs: number): Milestone[] {
  const starts = transitions.filter(
    (t) => t.atMs >= faultAtMs && t.name === "event" && t.detail?.["reason"] === "FenceStarted",
  );
  const second = starts[1];
  return second ? [{ name: "fence-started-twice", atMs: second.atMs - faultAtMs }] : [];
}

/**
 * Leader election for a scenario's controller replicas, on the profile's failover Lease renewed
 * every check interval (the takeover windows assume it). The Lease is deleted by the undo.
 */
export async function scenarioLeaderElection(context: ScenarioContext): Promise<{
  elector: (identity: string) => LeaderElector;
  /** The Lease's holder now (undefined while there is none). */
  holder: () => Promise<string | undefined>;
}> {
  const { kc, inputs, cluster, steps } = context;
  const namespace = inputs.controller.namespace;
  await ensureNamespace(kc, namespace, cluster.runId);
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  steps.registerUndo("delete the leader election Lease", async () => {
    await coordination
      .deleteNamespacedLease({ name: DEFAULT_LEADER_LEASE, namespace })
      .catch(() => undefined);
  });
  return {
    elector: (identity) =>
      new LeaderElector({
        kc,
        namespace,
        identity,
        leaseDurationMs: inputs.profile.failoverLeaseMs,
        retryPeriodMs: inputs.controller.checkIntervalMs,
      }),
    holder: async () =>
      (
        await coordination
          .readNamespacedLease({ name: DEFAULT_LEADER_LEASE, namespace })
          .catch(() => undefined)
      )?.spec?.holderIdentity,
  };
}
