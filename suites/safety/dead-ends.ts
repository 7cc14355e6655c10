// Safety: no fence state is a dead end (issue 25, item 3). A cancellation by hand survives a
// controller restart; a fence in error is retried until the BMC answers again; a NodeFence made by
// hand passes the guard (nothing while paused) and one not named after its node is refused; a node
// powered off right after the controller saw it renew is fenced, not stranded in recovery.
import type { FenceDriver, FenceTarget } from "../../lib/controller/drivers/types.js";
import { fenceCondition } from "../../lib/controller/fence-conditions.js";
import {
  CANCELLED_ANNOTATION,
  NODE_FENCE_GROUP,
  NODE_FENCE_VERSION,
  type FenceAction,
  type NodeFence,
} from "../../lib/controller/fence-state.js";
import { leaseRenewIntervalMs } from "../../lib/cluster/profiles.js";
import { OUT_OF_SERVICE_MILESTONE } from "../../lib/expect/model.js";
import { k8s } from "../../lib/kube/client.js";
import { readNode } from "../../lib/kube/queries.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import { ensureNamespace } from "../../lib/workloads/deploy.js";
import {
  deployWebAndDb,
  injectFault,
  nodeLossWorkloads,
  registerWaitBack,
  stopNodeAbruptly,
} from "../../lib/scenario/common.js";
import type { ScenarioContext } from "../../lib/scenario/harness.js";
import { powerBackOn, startSafetyController } from "../../lib/scenario/safety.js";
import { FENCE_STARTED_TWICE, safetyScenario } from "./define.js";
import {
  controllerHold,
  deleteNodeFenceByHand,
  HOLD_RELEASED,
  keepDown,
  NODE_FENCE_REF,
  NODEFENCE_DELETED,
  nodeFence,
  nodeFenceGone,
  nodeFencesByHand,
  openWithNodeLost,
  PARTITION_HEALED,
  watchAfterMs,
} from "./shared.js";

const CONTROLLER_RESTARTED = "controller-restarted";
const CANCELLATION_CLEARED = "cancellation-cleared";

export const cancelledThenRestarted = safetyScenario({
  id: "safety/cancelled-by-hand-then-restart",
  title:
    "a person deletes the NodeFence of a tainted node, then the controller restarts: the node is not fenced again while it stays down",
  requires: ["lifecycle", "fencing"],
  powerOffs: 1,
  never: {
    [FENCE_STARTED_TWICE]: "the cancellation is kept on the Node: a restarted controller honours it",
  },
  windows: (inputs) => {
    const c = inputs.controller;
    return [
      inputs.within({
        name: "event:FenceCancelled",
        after: NODEFENCE_DELETED,
        minMs: 0,
        maxMs: 2 * c.checkIntervalMs,
        why: "the NodeFence's finalizer: its taints are lifted and the cancellation recorded before it goes",
      }),
      inputs.within({
        name: CANCELLATION_CLEARED,
        after: "node-powered-back",
        minMs: 0,
        maxMs: leaseRenewIntervalMs(inputs.profile) + 4 * c.checkIntervalMs,
        why: "once the node is healthy again it may be fenced again: the cancellation is lifted",
      }),
    ];
  },
  workloads: nodeLossWorkloads,
  marks: [NODEFENCE_DELETED, CONTROLLER_RESTARTED, CANCELLATION_CLEARED, "node-powered-back"],
  note: (inputs) =>
    `keeps the node down ${watchAfterMs(inputs) / 1000}s after the restart (the new controller judges it lost after ${inputs.controller.unhealthyAfterMs / 1000}s)`,
  async run(context) {
    const { kc, steps } = context;
    const powerOffs = { count: 0 };
    const { node, controller } = await openWithNodeLost(context, powerOffs);
    await context.awaitMilestone(OUT_OF_SERVICE_MILESTONE);
    await deleteNodeFenceByHand(context, node);
    await context.awaitMilestone("event:FenceCancelled");
    await nodeFenceGone(context, node);
    await steps.step("restart the controller (a new process knows nothing in memory)", async () => {
      await controller.stop();
      context.mark(CONTROLLER_RESTARTED);
      await startSafetyController(context, powerOffs);
    });
    await keepDown(context, node);
    await powerBackOn(context, node);
    context.mark("node-powered-back");
    await steps.step(`the cancellation on ${node} is lifted once it is healthy`, () =>
      pollUntil(
        async () =>
          (await readNode(kc, node)).metadata?.annotations?.[CANCELLED_ANNOTATION] === undefined
            ? true
            : undefined,
        { what: `${CANCELLED_ANNOTATION} removed from ${node}`, timeoutMs: 60_000, intervalMs: 250 },
      ).then(() => {
        context.mark(CANCELLATION_CLEARED);
      }),
    );
  },
});

const BMC_BACK = "bmc-back";
const ERROR_SHOWN = "error-shown";
/** The error fence's settings here: one failure retried after 1 s, then 2 s, then 4 s apart. */
const ERROR_RETRIES = { fenceRetries: 1, retryBackoffMs: 1_000, maxRetryBackoffMs: 4_000 };
/** Failed attempts before the BMC returns: past fenceRetries, where fences used to stay in error. */
const FAILED_ATTEMPTS = 3;

/** A driver whose BMC does not answer (every call fails at once) while `down.value`. */
function bmcDownWhile(inner: FenceDriver, down: { value: boolean }): FenceDriver {
  const check = () => {
    if (down.value) throw new Error("the BMC does not answer (connection refused)");
  };
  return {
    ...inner,
    name: inner.name,
    async powerOff(target: FenceTarget, signal?: AbortSignal) {
      check();
      await inner.powerOff(target, signal);
    },
    async powerState(target: FenceTarget, signal?: AbortSignal) {
      check();
      return inner.powerState(target, signal);
    },
  };
}

export const errorFenceBmcBack = safetyScenario({
  id: "safety/fence-error-bmc-back",
  title:
    "the BMC is down when a node is lost: the fence fails past its retries and says why; the BMC returns and the fence completes",
  requires: ["lifecycle", "fencing"],
  powerOffs: 1,
  never: { [FENCE_STARTED_TWICE]: "one fence, retried, for one incident" },
  windows: (inputs) => {
    const c = inputs.controller;
    return [
      inputs.within({
        name: "fence:power-management:done",
        after: BMC_BACK,
        minMs: 0,
        maxMs: ERROR_RETRIES.maxRetryBackoffMs + 4 * c.checkIntervalMs,
        why: `the next retry (at most ${ERROR_RETRIES.maxRetryBackoffMs / 1000}s apart) powers the node off and confirms it`,
      }),
      inputs.within({
        name: ERROR_SHOWN,
        after: "fault-injected",
        minMs: 0,
        maxMs: c.unhealthyAfterMs + 2 * leaseRenewIntervalMs(inputs.profile) + 4 * c.checkIntervalMs,
        why: "the NodeFence's FenceSucceeded condition says the power-off failed and when it is retried",
      }),
    ];
  },
  workloads: nodeLossWorkloads,
  marks: [BMC_BACK, ERROR_SHOWN],
  note: () =>
    `BMC down for ${FAILED_ATTEMPTS} failed attempts (fenceRetries ${ERROR_RETRIES.fenceRetries}, backoff ${ERROR_RETRIES.retryBackoffMs / 1000}s doubling to ${ERROR_RETRIES.maxRetryBackoffMs / 1000}s)`,
  async run(context) {
    const { kc, steps, inputs } = context;
    const down = { value: true };
    const { node } = await openWithNodeLost(
      context,
      { count: 0 },
      { config: ERROR_RETRIES, wrap: (d) => bmcDownWhile(d, down) },
    );
    await steps.step(`wait for ${FAILED_ATTEMPTS} failed attempts to fence ${node}`, () =>
      pollUntil(
        async () => {
          const status = (await nodeFence(kc, node))?.status;
          const failed = fenceCondition(status, "FenceSucceeded");
          if (failed?.reason === "FenceFailed" && failed.message.includes("retrying in")) {
            if (!context.milestones().some((m) => m.name === ERROR_SHOWN)) context.mark(ERROR_SHOWN);
          }
          return (status?.retries ?? 0) >= FAILED_ATTEMPTS ? true : undefined;
        },
        {
          what: `${FAILED_ATTEMPTS} failed attempts to fence ${node}`,
          timeoutMs: 2 * inputs.controller.unhealthyAfterMs + 60_000,
          intervalMs: 200,
        },
      ),
    );
    await steps.step("the BMC answers again", () => {
      down.value = false;
      context.mark(BMC_BACK);
      return Promise.resolve();
    });
    await context.awaitMilestone("fence:power-management:done");
    await context.awaitMilestone(OUT_OF_SERVICE_MILESTONE);
    await context.awaitMilestone("statefulset:recovered");
    await powerBackOn(context, node);
  },
});

const HAND_MADE = "nodefence-made-by-hand";
const UNPAUSED = "unpaused";
const ACTED_WHILE_PAUSED = "unsafe:acted-while-paused";

/** Sets the controller's pause switch (its ConfigMap's `paused`); the undo deletes the ConfigMap. */
async function setPaused(context: ScenarioContext, paused: boolean): Promise<void> {
  const { kc, inputs, cluster, steps } = context;
  const { namespace, configMapName: name } = inputs.controller;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await ensureNamespace(kc, namespace, cluster.runId);
  const body: k8s.V1ConfigMap = { metadata: { name, namespace }, data: { paused: String(paused) } };
  try {
    await core.replaceNamespacedConfigMap({ name, namespace, body });
  } catch {
    await core.createNamespacedConfigMap({ namespace, body });
    steps.registerUndo(`delete ConfigMap ${namespace}/${name}`, async () => {
      await core.deleteNamespacedConfigMap({ name, namespace }).catch(() => undefined);
    });
  }
}

export const handMadeWhilePaused = safetyScenario({
  id: "safety/hand-made-nodefence-paused",
  title:
    "a person makes NodeFences for a lost node while the controller is paused: nothing happens (one named other than its node is refused); unpaused, the node is fenced",
  requires: ["lifecycle", "fencing"],
  powerOffs: 1,
  never: {
    [ACTED_WHILE_PAUSED]: "no power-off, no taint, no cleanup while paused, whoever made the NodeFence",
  },
  windows: (inputs) => {
    const c = inputs.controller;
    return [
      inputs.within({
        name: "event:FenceRefused",
        after: HAND_MADE,
        minMs: 0,
        maxMs: 2 * c.checkIntervalMs,
        why: "a NodeFence must be named after its node: the other one is refused at the next pass",
      }),
      inputs.within({
        name: OUT_OF_SERVICE_MILESTONE,
        after: UNPAUSED,
        minMs: 0,
        maxMs: 6 * c.checkIntervalMs + 2_000,
        why: "unpaused, the hand-made fence of a lost node goes through: power-off, confirm, taint",
      }),
    ];
  },
  workloads: nodeLossWorkloads,
  marks: [HAND_MADE, UNPAUSED, ACTED_WHILE_PAUSED],
  async run(context) {
    const { kc, steps, inputs } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    await steps.step("pause the controller", () => setPaused(context, true));
    const powerOffs = { count: 0 };
    await startSafetyController(context, powerOffs);
    await stopNodeAbruptly(context, node);
    const misnamed = `${node}-by-hand`;
    await steps.step(`make NodeFences ${node} and ${misnamed} (spec.node ${node}) by hand`, async () => {
      for (const name of [node, misnamed]) {
        steps.registerUndo(`delete NodeFence ${name}`, async () => {
          await nodeFencesByHand(kc)
            .deleteClusterCustomObject({ ...NODE_FENCE_REF, name })
            .catch(() => undefined);
        });
        const body: NodeFence = {
          apiVersion: `${NODE_FENCE_GROUP}/${NODE_FENCE_VERSION}`,
          kind: "NodeFence",
          metadata: { name },
          spec: { node, reason: "made by hand" },
        };
        await nodeFencesByHand(kc).createClusterCustomObject({ ...NODE_FENCE_REF, body });
      }
      context.mark(HAND_MADE);
    });
    await context.awaitMilestone("event:FenceRefused");
    const watchMs = watchAfterMs(inputs);
    await steps.step(`watch ${watchMs / 1000}s while paused: nothing may happen`, async () => {
      await sleep(watchMs, context.signal);
      const fence = await nodeFence(kc, node);
      const tainted = (await readNode(kc, node)).spec?.taints?.some((t) => t.key.includes("out-of-service"));
      if (powerOffs.count > 0 || tainted === true || (fence?.status?.phase ?? "new") !== "new") {
        context.mark(ACTED_WHILE_PAUSED);
      }
      context.progress.info(`NodeFence ${node} says: ${fence?.status?.message ?? "(no status)"}`);
    });
    await steps.step("unpause the controller", async () => {
      await setPaused(context, false);
      context.mark(UNPAUSED);
    });
    await context.awaitMilestone(OUT_OF_SERVICE_MILESTONE);
    await context.awaitMilestone("statefulset:recovered");
    await powerBackOn(context, node);
  },
});

const POWERED_OFF = "powered-off-after-renewal";

export const poweredOffAfterRenewal = safetyScenario({
  id: "safety/powered-off-after-renewal",
  title:
    "a fence's node renews (its partition healed) and is powered off right after: the fence is not aborted into a recovery that never completes; the node ends tainted and released",
  requires: ["lifecycle", "partition", "fencing"],
  powerOffs: 0,
  never: {
    "event:FenceAborted":
      "the node is off: its fence goes on instead of recovering a node that never returns",
    [FENCE_STARTED_TWICE]: "one fence for one incident",
  },
  windows: (inputs) => {
    const c = inputs.controller;
    return [
      inputs.within({
        name: "event:FenceSucceeded",
        after: HOLD_RELEASED,
        minMs: 0,
        maxMs: 2 * c.checkIntervalMs,
        why: "the abort reads the power state first: off confirms the fence",
      }),
      inputs.within({
        name: OUT_OF_SERVICE_MILESTONE,
        after: POWERED_OFF,
        minMs: 0,
        maxMs: c.unhealthyAfterMs + 4 * c.checkIntervalMs,
        why: "tainted once the controller judges it lost (unhealthyAfter after its last renewal)",
      }),
    ];
  },
  workloads: nodeLossWorkloads,
  marks: [PARTITION_HEALED, POWERED_OFF, HOLD_RELEASED],
  note: (inputs) =>
    `healthyBeforeUnfence ${(2 * inputs.controller.unhealthyAfterMs) / 1000}s (twice unhealthyAfter): an aborted fence's node, off after one renewal, is never healthy that long, so its recovery would never complete`,
  async run(context) {
    const { steps, inputs } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    const hold = controllerHold(context, (a: FenceAction) => a === "power-off" || a === "abort");
    await startSafetyController(
      context,
      { count: 0 },
      {
        haltBefore: hold.haltBefore,
        // A cautious operator's setting, and what makes an aborted fence of a node that is off a
        // dead end: it never looks healthy long enough to be let go, and is never fenced again.
        config: { healthyBeforeUnfenceMs: 2 * inputs.controller.unhealthyAfterMs },
      },
    );
    const cut = await injectFault(context, `partition ${node}`, {
      action: { kind: "partition" },
      nodes: [node],
    });
    await context.awaitMilestone("event:FenceStarted");
    await steps.step(`heal ${node} while the controller is held before its power-off`, () =>
      cut.revert({
        onReverted: () => {
          context.mark(PARTITION_HEALED);
        },
      }),
    );
    await steps.step(`wait until ${node} renews and the controller has seen it`, async () => {
      await context.waitNodeBack(node);
      await sleep(2 * inputs.controller.checkIntervalMs, context.signal);
    });
    registerWaitBack(context, node);
    await steps.step(`power ${node} off right after that renewal`, async () => {
      await context.faults.inject({ action: { kind: "stop" }, nodes: [node] });
      context.mark(POWERED_OFF);
    });
    await hold.release("release the controller (its next step would abort the fence)");
    await context.awaitMilestone(OUT_OF_SERVICE_MILESTONE);
    await context.awaitMilestone("statefulset:recovered");
    await powerBackOn(context, node);
  },
});
