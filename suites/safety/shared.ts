// What the safety scenarios share beside their skeleton (define.ts): the milestones they mark, the
// shared opening (web and db deployed, the counted controller started, the StatefulSet's node
// stopped), a hold on the controller, NodeFences deleted by hand, how long a "must not fence"
// scenario keeps watching, zones relabelled.
import type { RecoveryController } from "../../lib/controller/controller.js";
import type { FenceAction } from "../../lib/controller/fence-state.js";
import {
  NODE_FENCE_GROUP,
  NODE_FENCE_PLURAL,
  NODE_FENCE_VERSION,
  type NodeFence,
} from "../../lib/controller/fence-state.js";
import { NodeFenceStore } from "../../lib/controller/node-fence-store.js";
import { renewTimeOf } from "../../lib/controller/observations.js";
import { leaseRenewIntervalMs } from "../../lib/cluster/profiles.js";
import { k8s } from "../../lib/kube/client.js";
import { ZONE_LABEL } from "../../lib/kube/queries.js";
import { deployWebAndDb, stopNodeAbruptly } from "../../lib/scenario/common.js";
import type { DeriveContext, ExpectationInputs, ScenarioContext } from "../../lib/scenario/harness.js";
import type { Milestone } from "../../lib/observe/milestones.js";
import type { Transition } from "../../lib/observe/types.js";
import { startSafetyController, type SafetyControllerOptions } from "../../lib/scenario/safety.js";
import type { FaultHandle } from "../../lib/fault/handle.js";
import { PARTITION_HEALED_MILESTONE } from "../../lib/expect/node-windows.js";
import { pollUntil, sleep } from "../../lib/util/time.js";

export const NODE_POWERED_ON = "node-powered-on";
export const HOLD_RELEASED = "hold-released";
/** Marked when a scenario deletes a NodeFence by hand (a person cancelling it). */
export const NODEFENCE_DELETED = "nodefence-deleted";
/** A powered-on node's agent runs again within this (the node then renews at its next interval). */
export const NODE_BACK_MS = 2_000;

export function nodeFence(kc: k8s.KubeConfig, node: string): Promise<NodeFence | undefined> {
  return new NodeFenceStore(kc).read(node);
}

/** NodeFences as a person's kubectl reaches them (made or deleted by hand): `{...NODE_FENCE_REF, name}`. */
export const NODE_FENCE_REF = {
  group: NODE_FENCE_GROUP,
  version: NODE_FENCE_VERSION,
  plural: NODE_FENCE_PLURAL,
};

export function nodeFencesByHand(kc: k8s.KubeConfig): k8s.CustomObjectsApi {
  return kc.makeApiClient(k8s.CustomObjectsApi);
}

/** A person deletes the node's NodeFence (marking NODEFENCE_DELETED), as one step. */
export async function deleteNodeFenceByHand(context: ScenarioContext, node: string): Promise<void> {
  await context.steps.step(`delete the NodeFence of ${node} by hand`, async () => {
    await nodeFencesByHand(context.kc).deleteClusterCustomObject({ ...NODE_FENCE_REF, name: node });
    context.mark(NODEFENCE_DELETED);
  });
}

/** Waits, as one step, until the node's NodeFence is gone (its finalizer done). */
export async function nodeFenceGone(context: ScenarioContext, node: string): Promise<void> {
  await context.steps.step("the NodeFence is gone", () =>
    pollUntil(async () => ((await nodeFence(context.kc, node)) === undefined ? true : undefined), {
      what: `NodeFence ${node} deleted`,
      timeoutMs: 10_000,
    }),
  );
}

/** Keeps the (lost) node down watchAfterMs, as one step: no new fence may start meanwhile. */
export async function keepDown(context: ScenarioContext, node: string): Promise<void> {
  const watchMs = watchAfterMs(context.inputs);
  await context.steps.step(`keep ${node} down ${watchMs / 1000}s: no new fence`, () =>
    sleep(watchMs, context.signal),
  );
}

/**
 * Holds the controller right before the actions `holds` picks (its `haltBefore`) until `release`,
 * the step that lets it go and marks HOLD_RELEASED.
 */
export function controllerHold(
  context: ScenarioContext,
  holds: (action: FenceAction) => boolean,
): { haltBefore: (action: FenceAction) => boolean; release: (what?: string) => Promise<void> } {
  let held = true;
  return {
    haltBefore: (action) => held && holds(action),
    release: (what = "release the controller") =>
      context.steps.step(what, () => {
        held = false;
        context.mark(HOLD_RELEASED);
        return Promise.resolve();
      }),
  };
}

/** The node's Lease renewTime as the API has it now. */
export async function leaseRenewTime(context: ScenarioContext, node: string): Promise<string | undefined> {
  const coordination = context.kc.makeApiClient(k8s.CoordinationV1Api);
  return renewTimeOf(await coordination.readNamespacedLease({ name: node, namespace: "kube-node-lease" }));
}

/** Waits until the node's Lease renewTime is no longer `before` (leaseRenewTime's, read earlier). */
export async function renewedSince(
  context: ScenarioContext,
  node: string,
  before: string | undefined,
): Promise<void> {
  await pollUntil(async () => ((await leaseRenewTime(context, node)) !== before ? true : undefined), {
    what: `${node} to renew its Lease`,
    timeoutMs: 2 * leaseRenewIntervalMs(context.inputs.profile) + 10_000,
    intervalMs: 100,
    ...(context.signal ? { signal: context.signal } : {}),
  });
}

/** Marked when a scenario heals its partition (healThenWatch). */
export const PARTITION_HEALED = PARTITION_HEALED_MILESTONE;

/** How long a "must not fence" scenario keeps watching after the condition ends. */
export function watchAfterMs(inputs: ExpectationInputs): number {
  return (
    inputs.controller.unhealthyAfterMs +
    inputs.profile.nodeLeaseDurationSeconds * 250 +
    4 * inputs.controller.checkIntervalMs
  );
}

/**
 * The shared opening: web and db deployed, the counted safety controller started (with `options`),
 * then the StatefulSet's node stopped abruptly. Returns that node and the controller.
 */
export async function openWithNodeLost(
  context: ScenarioContext<"lifecycle" | "fencing">,
  powerOffs: { count: number } = { count: 0 },
  options: SafetyControllerOptions = {},
): Promise<{ node: string; controller: RecoveryController }> {
  const { statefulSetNode: node } = await deployWebAndDb(context);
  const controller = await startSafetyController(context, powerOffs, options);
  await stopNodeAbruptly(context, node);
  return { node, controller };
}

/**
 * Gives each of `workers` the zone `zoneOf` names (its topology label), restored by an undo: the
 * sim's fixed 3 workers in 2 zones laid out as a scenario needs them.
 */
export async function relabelZones(
  context: ScenarioContext,
  workers: readonly string[],
  what: string,
  zoneOf: (worker: string, originals: ReadonlyMap<string, string | undefined>) => string,
): Promise<void> {
  const core = context.kc.makeApiClient(k8s.CoreV1Api);
  const originals = new Map<string, string | undefined>();
  for (const name of workers)
    originals.set(name, (await core.readNode({ name })).metadata?.labels?.[ZONE_LABEL]);
  const label = async (name: string, value: string | null) => {
    await core.patchNode(
      { name, body: { metadata: { labels: { [ZONE_LABEL]: value } } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  };
  context.steps.registerUndo("give the workers their zones back", async () => {
    for (const [name, original] of originals) await label(name, original ?? null).catch(() => undefined);
  });
  await context.steps.step(what, async () => {
    for (const name of workers) await label(name, zoneOf(name, originals));
  });
}

/**
 * The milestone `name` at the Event (of `reason`, after the fault) by which every fault node has had
 * one; none while some node has not.
 */
export function everyFaultNodeHad(
  transitions: readonly Transition[],
  context: DeriveContext,
  reason: string,
  name: string,
): Milestone[] {
  const had = new Set<string>();
  for (const t of transitions) {
    if (t.atMs < context.faultAtMs || t.name !== "event" || t.node === undefined) continue;
    if (t.detail?.["reason"] !== reason) continue;
    had.add(t.node);
    if (context.faultNodes.every((n) => had.has(n)))
      return [{ name, atMs: t.atMs - context.faultAtMs, node: t.node }];
  }
  return [];
}

/**
 * The close of a "must not fence" partition: heals `cut` (marking PARTITION_HEALED as it reverts),
 * then watches watchAfterMs for a late `forbidden` (a fence, a power-off).
 */
export async function healThenWatch(
  context: ScenarioContext,
  cut: FaultHandle,
  nodes: readonly string[],
  forbidden: string,
): Promise<void> {
  const { steps, inputs } = context;
  await steps.step(`heal ${nodes.join(", ")}`, () =>
    cut.revert({
      onReverted: () => {
        context.mark(PARTITION_HEALED);
      },
    }),
  );
  await steps.step(`watch ${watchAfterMs(inputs) / 1000}s more: ${forbidden}`, () =>
    sleep(watchAfterMs(inputs), context.signal),
  );
}
