// Safety when the controller itself is in trouble: its fence driver hangs past the leader Lease,
// a person deletes its NodeFence, it is killed before each fence action. Every case allows one
// fence for the one incident (deriveUnsafeOrTwice) and one power-off.
import type { FenceDriver, FenceTarget } from "../../lib/controller/drivers/types.js";
import type { FenceAction } from "../../lib/controller/fence-state.js";
import { OUT_OF_SERVICE_MILESTONE } from "../../lib/expect/model.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import {
  deployWebAndDb,
  detectionWindow,
  never,
  nodeLossWorkloads,
  stopNodeAbruptly,
} from "../../lib/scenario/common.js";
import { defineScenario } from "../../lib/scenario/harness.js";
import {
  checkNothingLeftBehind,
  powerBackOn,
  SAFETY_MILESTONES,
  safetyExpectations,
  scenarioLeaderElection,
  startSafetyController,
} from "../../lib/scenario/safety.js";
import {
  deriveUnsafeOrTwice,
  NODEFENCE_DELETED,
  NODE_FENCE_REF,
  nodeFence,
  nodeFencesByHand,
  openWithNodeLost,
  watchAfterMs,
} from "./shared.js";

const LEADER_CHANGED = "unsafe:leadership-changed";

/**
 * A fence driver whose first power-off hangs, ignoring its signal, until `released` settles (the
 * scenario's undo), and then fails without acting: a BMC that never answers. The later calls go
 * through.
 */
function hangingOnce(inner: FenceDriver, released: Promise<void>): FenceDriver {
  let hung = false;
  return {
    ...inner,
    name: inner.name,
    powerState: (target: FenceTarget, signal?: AbortSignal) => inner.powerState(target, signal),
    async powerOff(target: FenceTarget, signal?: AbortSignal) {
      if (!hung) {
        hung = true;
        await released;
        throw new Error("the BMC never answered");
      }
      await inner.powerOff(target, signal);
    },
  };
}

export const driverHangsTwoReplicas = defineScenario({
  id: "safety/fence-driver-hangs-two-replicas",
  title:
    "the fence driver hangs far past the leader Lease with two replicas: the leader keeps its Lease, abandons the call and retries; one power-off",
  requires: ["lifecycle", "fencing"],
  usesController: true,
  expected: (inputs) => {
    const c = inputs.controller;
    const detect = detectionWindow(inputs, { poweredOff: true });
    return [
      ...safetyExpectations(1),
      never(LEADER_CHANGED, "the standby never takes over: the Lease is renewed on its own timer"),
      never("fence-started-twice", "one fence for one incident"),
      inputs.within({
        name: "fence:power-management:error",
        after: "fault-injected",
        minMs: detect.minMs,
        maxMs: detect.maxMs + inputs.profile.failoverLeaseMs + 2 * c.checkIntervalMs,
        why: "the hanging call is abandoned within the leader's safe time (less than the Lease)",
      }),
      inputs.within({
        name: "fence:power-management:done",
        after: "fence:power-management:error",
        minMs: 0,
        maxMs: 2_000 + 4 * c.checkIntervalMs,
        why: "retried after the backoff (2 s here), the power-off goes through",
      }),
    ];
  },
  workloads: nodeLossWorkloads,
  recoveryOf: [],
  async run(context) {
    const { kc, steps } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    const { elector, holder } = await scenarioLeaderElection(context);
    const powerOffs = { count: 0 };
    const hang = new AbortController();
    const released = new Promise<void>((resolve) => {
      hang.signal.addEventListener("abort", () => {
        resolve();
      });
    });
    steps.registerUndo("let the hung fence driver call end (it fails without acting)", () => {
      hang.abort();
      return Promise.resolve();
    });
    const config = { retryBackoffMs: 2_000 };
    await startSafetyController(context, powerOffs, {
      config: { ...config, identity: "replica-a" },
      leader: elector("replica-a"),
      wrap: (d) => hangingOnce(d, released),
    });
    await steps.step("let replica-a take the Lease", () =>
      pollUntil(async () => ((await holder()) === "replica-a" ? true : undefined), {
        what: "replica-a to hold the leader Lease",
        timeoutMs: 10_000,
        intervalMs: 200,
      }),
    );
    await startSafetyController(context, powerOffs, {
      config: { ...config, identity: "replica-b" },
      leader: elector("replica-b"),
      wrap: (d) => hangingOnce(d, released),
    });
    await stopNodeAbruptly(context, node);
    await steps.step("watch the Lease holder until the fence is confirmed", () =>
      pollUntil(
        async () => {
          if ((await holder()) !== "replica-a") context.mark(LEADER_CHANGED);
          const f = await nodeFence(kc, node);
          return f?.status?.fencedAt !== undefined ? true : undefined;
        },
        { what: `the fence of ${node} confirmed`, timeoutMs: 120_000, intervalMs: 250 },
      ),
    );
    await context.awaitMilestone("statefulset:recovered", 120_000);
    await powerBackOn(context, node);
    await checkNothingLeftBehind(context);
  },
  ownMilestones: [...SAFETY_MILESTONES, LEADER_CHANGED, "fence-started-twice"],
  derive: deriveUnsafeOrTwice,
});

export const nodeFenceDeletedByHand = defineScenario({
  id: "safety/nodefence-deleted-by-hand",
  title:
    "a person deletes the NodeFence of a tainted node: its taints are lifted, the node is not fenced again while it stays down",
  requires: ["lifecycle", "fencing"],
  usesController: true,
  expected: (inputs) => {
    const c = inputs.controller;
    return [
      ...safetyExpectations(1),
      never("fence-started-twice", "a cancelled fence is not started again until the node has been healthy"),
      inputs.within({
        name: "taint-removed:node.kubernetes.io/out-of-service",
        after: NODEFENCE_DELETED,
        minMs: 0,
        maxMs: 2 * c.checkIntervalMs,
        why: "the NodeFence's finalizer: its taints are lifted before it goes",
      }),
      inputs.within({
        name: "event:FenceCancelled",
        after: NODEFENCE_DELETED,
        minMs: 0,
        maxMs: 2 * c.checkIntervalMs,
        why: "the controller says what it did",
      }),
    ];
  },
  workloads: nodeLossWorkloads,
  recoveryOf: [],
  async run(context) {
    const { kc, steps, inputs } = context;
    const { node } = await openWithNodeLost(context);
    await context.awaitMilestone(OUT_OF_SERVICE_MILESTONE);
    await steps.step(`delete the NodeFence of ${node} by hand`, async () => {
      await nodeFencesByHand(kc).deleteClusterCustomObject({ ...NODE_FENCE_REF, name: node });
      context.mark(NODEFENCE_DELETED);
    });
    await context.awaitMilestone("taint-removed:node.kubernetes.io/out-of-service");
    await steps.step("the NodeFence is gone", () =>
      pollUntil(async () => ((await nodeFence(kc, node)) === undefined ? true : undefined), {
        what: `NodeFence ${node} deleted`,
        timeoutMs: 10_000,
      }),
    );
    await steps.step(`keep ${node} down ${watchAfterMs(inputs) / 1000}s: no new fence`, () =>
      sleep(watchAfterMs(inputs), context.signal),
    );
    await powerBackOn(context, node);
    await checkNothingLeftBehind(context);
  },
  ownMilestones: [...SAFETY_MILESTONES, NODEFENCE_DELETED, "fence-started-twice"],
  derive: deriveUnsafeOrTwice,
});

/** The fence's state right before each action: a controller halted before it stops there. */
const KILL_POINTS: readonly { before: FenceAction; step: string; phase: string }[] = [
  { before: "power-off", step: "power-management", phase: "new" },
  { before: "confirm-off", step: "power-management", phase: "running" },
  { before: "taint", step: "power-management", phase: "done" },
  { before: "cleanup", step: "taint", phase: "done" },
  { before: "begin-recovery", step: "cleanup", phase: "done" },
  { before: "finish-recovery", step: "recovery", phase: "running" },
];

export const controllerKilledAtEveryStep = defineScenario({
  id: "safety/controller-killed-at-every-step",
  title:
    "the controller is killed right before each fence action and restarted: every restart resumes the NodeFence, one fence, one power-off",
  requires: ["lifecycle", "fencing"],
  usesController: true,
  expected: () => [
    ...safetyExpectations(1),
    never("fence-started-twice", "every restarted controller resumes the one NodeFence"),
  ],
  workloads: nodeLossWorkloads,
  recoveryOf: [],
  note: (inputs) =>
    `${KILL_POINTS.length} restarts; each waits unhealthyAfter (${inputs.controller.unhealthyAfterMs / 1000}s) for evidence before acting`,
  async run(context) {
    const { kc, steps, cluster, inputs } = context;
    const powerOffs = { count: 0 };
    const opened = await openWithNodeLost(context, powerOffs, {
      haltBefore: KILL_POINTS[0]?.before ?? "power-off",
    });
    const { node } = opened;
    let { controller } = opened;
    for (const [i, point] of KILL_POINTS.entries()) {
      await steps.step(`wait for the fence at ${point.step}/${point.phase} (next: ${point.before})`, () =>
        pollUntil(
          async () => {
            const f = await nodeFence(kc, node);
            return f?.status?.step === point.step && f.status.phase === point.phase ? true : undefined;
          },
          {
            what: `NodeFence ${node} at ${point.step}/${point.phase}`,
            timeoutMs: 4 * inputs.controller.unhealthyAfterMs + 60_000,
            intervalMs: 200,
          },
        ),
      );
      if (point.before === "finish-recovery") {
        await steps.step(`power ${node} back on`, async () => {
          await cluster.capabilities.lifecycle.startNode(node);
          await context.waitNodeBack(node);
        });
      }
      await steps.step(`kill the controller before ${point.before} and start a new one`, async () => {
        await sleep(2 * inputs.controller.checkIntervalMs, context.signal);
        await controller.stop();
        const next = KILL_POINTS[i + 1];
        controller = await startSafetyController(context, powerOffs, next ? { haltBefore: next.before } : {});
      });
    }
    await context.awaitMilestone("fence:recovery:done", 4 * inputs.controller.unhealthyAfterMs + 60_000);
    await checkNothingLeftBehind(context);
  },
  ownMilestones: [...SAFETY_MILESTONES, "fence-started-twice"],
  derive: deriveUnsafeOrTwice,
});
