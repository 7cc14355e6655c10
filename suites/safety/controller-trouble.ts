// Safety when the controller itself is in trouble: its fence driver hangs past the leader Lease,
// a person deletes its NodeFence, it is killed before each fence action. Every case allows one
// fence for the one incident (FENCE_STARTED_TWICE) and one power-off.
import type { FenceAction } from "../../lib/controller/fence-state.js";
import { OUT_OF_SERVICE_MILESTONE } from "../../lib/expect/model.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import {
  deployWebAndDb,
  detectionWindow,
  nodeLossWorkloads,
  stopNodeAbruptly,
} from "../../lib/scenario/common.js";
import { powerBackOn, scenarioLeaderElection, startSafetyController } from "../../lib/scenario/safety.js";
import { FENCE_STARTED_TWICE, safetyScenario } from "./define.js";
import { firstCallHangs, hangUntilReleased } from "./hangs.js";
import {
  deleteNodeFenceByHand,
  keepDown,
  NODEFENCE_DELETED,
  nodeFence,
  nodeFenceGone,
  openWithNodeLost,
} from "./shared.js";

const LEADER_CHANGED = "unsafe:leadership-changed";

export const driverHangsTwoReplicas = safetyScenario({
  id: "safety/fence-driver-hangs-two-replicas",
  title:
    "the fence driver hangs far past the leader Lease with two replicas: the leader keeps its Lease, abandons the call and retries; one power-off",
  requires: ["lifecycle", "fencing"],
  powerOffs: 1,
  never: {
    [LEADER_CHANGED]: "the standby never takes over: the Lease is renewed on its own timer",
    [FENCE_STARTED_TWICE]: "one fence for one incident",
  },
  windows: (inputs) => {
    const c = inputs.controller;
    const detect = detectionWindow(inputs, { poweredOff: true });
    return [
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
  marks: [LEADER_CHANGED],
  async run(context) {
    const { kc, steps } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    const { elector, holder } = await scenarioLeaderElection(context);
    const powerOffs = { count: 0 };
    const { released } = hangUntilReleased(context, "fence driver call");
    const config = { retryBackoffMs: 2_000 };
    await startSafetyController(context, powerOffs, {
      config: { ...config, identity: "replica-a" },
      leader: elector("replica-a"),
      wrap: (d) => firstCallHangs(d, "powerOff", { released }),
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
      wrap: (d) => firstCallHangs(d, "powerOff", { released }),
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
  },
});

export const nodeFenceDeletedByHand = safetyScenario({
  id: "safety/nodefence-deleted-by-hand",
  title:
    "a person deletes the NodeFence of a tainted node: its taints are lifted, the node is not fenced again while it stays down",
  requires: ["lifecycle", "fencing"],
  powerOffs: 1,
  never: {
    [FENCE_STARTED_TWICE]: "a cancelled fence is not started again until the node has been healthy",
  },
  windows: (inputs) => {
    const c = inputs.controller;
    return [
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
  marks: [NODEFENCE_DELETED],
  async run(context) {
    const { node } = await openWithNodeLost(context);
    await context.awaitMilestone(OUT_OF_SERVICE_MILESTONE);
    await deleteNodeFenceByHand(context, node);
    await context.awaitMilestone("taint-removed:node.kubernetes.io/out-of-service");
    await nodeFenceGone(context, node);
    await keepDown(context, node);
    await powerBackOn(context, node);
  },
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

export const controllerKilledAtEveryStep = safetyScenario({
  id: "safety/controller-killed-at-every-step",
  title:
    "the controller is killed right before each fence action and restarted: every restart resumes the NodeFence, one fence, one power-off",
  requires: ["lifecycle", "fencing"],
  powerOffs: 1,
  never: { [FENCE_STARTED_TWICE]: "every restarted controller resumes the one NodeFence" },
  workloads: nodeLossWorkloads,
  note: (inputs) =>
    `${KILL_POINTS.length} restarts; each waits unhealthyAfter (${inputs.controller.unhealthyAfterMs / 1000}s) for evidence before acting`,
  async run(context) {
    const { kc, steps, inputs } = context;
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
      if (point.before === "finish-recovery") await powerBackOn(context, node);
      await steps.step(`kill the controller before ${point.before} and start a new one`, async () => {
        await sleep(2 * inputs.controller.checkIntervalMs, context.signal);
        await controller.stop();
        const next = KILL_POINTS[i + 1];
        controller = await startSafetyController(context, powerOffs, next ? { haltBefore: next.before } : {});
      });
    }
    await context.awaitMilestone("fence:recovery:done", 4 * inputs.controller.unhealthyAfterMs + 60_000);
  },
});
