// Partition: the node is cut off from the API server but keeps running. Healed before the
// controller's detection, nothing may happen; healed after a fence, the node must come back
// without its old pods and the controller must undo its taints.
import { sleep } from "../lib/util/time.js";
import { defineScenario, type ExpectationInputs } from "../lib/scenario/harness.js";
import {
  deployWebAndDb,
  expectedControllerRecovery,
  leaseRenewMs,
  never,
  noFence,
  nodeLossWorkloads,
} from "../lib/scenario/common.js";

/** The scenario's mark: the fenced node healed and powered back on. */
const NODE_POWERED_ON = "node-powered-on";
/** From power-on to the node's agent reporting again (a kubelet, or a kwok process, starting). */
const NODE_AGENT_START_MS = 2_000;

/** Shorter than the controller's unhealthyAfter by one Lease renewal plus a margin. */
export function shortPartitionMs(inputs: ExpectationInputs): number {
  const unhealthyAfter = inputs.controller.unhealthyAfterMs;
  return Math.max(1_000, unhealthyAfter - leaseRenewMs(inputs) - Math.max(2_000, unhealthyAfter / 4));
}

export const partitionHealedBeforeDetection = defineScenario({
  id: "partition/healed-before-detection",
  title: "a partition shorter than the controller's unhealthyAfter: no fence, no eviction, no taint",
  requires: ["partition"],
  usesController: true,
  expected: (inputs) => {
    const partitionMs = shortPartitionMs(inputs);
    return [
      {
        // Not widened below: the heal cannot come early.
        ...inputs.within({
          name: "partition-healed",
          after: "fault-injected",
          minMs: partitionMs,
          maxMs: partitionMs,
          why: `healed after ${partitionMs / 1000}s, a Lease renewal and a margin short of unhealthyAfter`,
        }),
        minMs: partitionMs,
      },
      never("node-ready-unknown", "healed well within node-monitor-grace-period"),
      never("deployment:pod-deletion-requested", "nothing is evicted"),
      never("statefulset:pod-deletion-requested", "nothing is evicted"),
      never("statefulset-plain:pod-deletion-requested", "nothing is evicted"),
      ...noFence("the node was never unhealthy for unhealthyAfter"),
    ];
  },
  workloads: nodeLossWorkloads,
  ownMilestones: ["partition-healed"],
  recoveryOf: [],
  async run(context) {
    const { steps, inputs } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    await context.startController();
    const partitionMs = shortPartitionMs(inputs);
    const partition = await steps.step(`partition ${node}`, () =>
      context.faults.inject({
        action: { kind: "partition" },
        nodes: [node],
        durationMs: partitionMs,
        onFirstEffect: () => {
          context.faultStarts([node]);
        },
      }),
    );
    await steps.step(`keep ${node} partitioned for ${partitionMs / 1000}s`, () =>
      sleep(partitionMs, context.signal),
    );
    await steps.step(`heal ${node}`, () =>
      partition.revert({
        onReverted: () => {
          context.mark("partition-healed");
        },
      }),
    );
    const watchMs = inputs.controller.unhealthyAfterMs + 3 * inputs.controller.checkIntervalMs;
    await steps.step(`watch ${watchMs / 1000}s more: no fence may start`, () =>
      sleep(watchMs, context.signal),
    );
  },
});

export const partitionHealedAfterFence = defineScenario({
  id: "partition/healed-after-fence",
  title: "a partition outlasting detection: fenced, workloads moved, the node returns without its old pods",
  // lifecycle: the fenced node is powered back on once the partition heals.
  requires: ["partition", "lifecycle"],
  usesController: true,
  expected: (inputs) => {
    const c = inputs.controller;
    return [
      ...expectedControllerRecovery(inputs, { frozen: true }),
      // Anchored on the power-on, not on "node-ready-again": at upstream settings the node is
      // fenced and back long before node-monitor-grace-period would have marked it Unknown, so its
      // Ready condition never changes and there is no "again".
      inputs.within({
        name: "taint-removed:node.kubernetes.io/out-of-service",
        after: NODE_POWERED_ON,
        minMs: 0,
        maxMs: NODE_AGENT_START_MS + leaseRenewMs(inputs) + c.healthyBeforeUnfenceMs + 3 * c.checkIntervalMs,
        why: `the controller lifts its taint once the node has renewed its Lease and stayed healthy ${c.healthyBeforeUnfenceMs / 1000}s, with no stale pods`,
      }),
      never("statefulset:duplicate-ready", "the old StatefulSet pod is gone before its replacement runs"),
    ];
  },
  workloads: nodeLossWorkloads,
  async run(context) {
    const { cluster, steps } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    await context.startController();
    // The controller powers the node off (its fence): registered before the partition's handle, so
    // it runs after the handle's revert healed the partition.
    steps.registerUndo(`power ${node} on and wait until it is back`, async () => {
      await cluster.capabilities.lifecycle.startNode(node);
      await context.waitNodeBack(node);
    });
    const partition = await steps.step(`partition ${node}`, () =>
      context.faults.inject({
        action: { kind: "partition" },
        nodes: [node],
        onFirstEffect: () => {
          context.faultStarts([node]);
        },
      }),
    );
    await context.awaitMilestone("statefulset:recovered");
    await context.awaitMilestone("deployment:recovered");
    await steps.step(`heal the partition and power ${node} back on`, async () => {
      await partition.revert();
      // At the moment it runs again: the existing provider still has its agent revert after that.
      let marked = false;
      const markPoweredOn = () => {
        if (marked) return;
        marked = true;
        context.mark(NODE_POWERED_ON);
      };
      await cluster.capabilities.lifecycle.startNode(node, { onRunning: markPoweredOn });
      markPoweredOn();
    });
    await context.awaitMilestone("taint-removed:node.kubernetes.io/out-of-service");
  },
  // "statefulset:duplicate-ready" is derived for every workload (lib/observe/duplicate-ready.ts).
  ownMilestones: [NODE_POWERED_ON],
});

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [partitionHealedBeforeDetection, partitionHealedAfterFence];
