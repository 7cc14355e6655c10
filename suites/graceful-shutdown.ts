// Graceful node shutdown: the kubelet sees the shutdown coming, marks the node NotReady ("node is
// shutting down"), ends its pods with reason Terminated, and only then goes silent. Workloads move
// on their own (a terminated StatefulSet pod is replaced at once, its volume detaches), so the
// controller must not fence: the node holds nothing to release. The node lifecycle controller still
// marks the silent node Unknown once node-monitor-grace-period has passed since its last status.
import { sleep } from "../lib/util/time.js";
import { defineScenario } from "../lib/scenario/harness.js";
import {
  deployWebAndDb,
  detectionWindow,
  noFence,
  nodeLossWorkloads,
  shutNodeDown,
} from "../lib/scenario/common.js";

export const gracefulShutdownNoFence = defineScenario({
  id: "graceful-shutdown/no-fence",
  title: "an orderly node shutdown: pods end with reason Terminated, workloads move, no fence",
  requires: ["graceful-shutdown", "lifecycle"],
  usesController: true,
  expected: (inputs) => {
    const grace = inputs.eviction.shutdownGracePeriodMs;
    const monitorGraceMs = inputs.profile.nodeMonitorGracePeriodSeconds * 1000;
    const monitorPeriodMs = inputs.profile.nodeMonitorPeriodSeconds * 1000;
    const { podStartMs, attachMs } = inputs.latencies;
    const detect = detectionWindow(inputs);
    return [
      inputs.within({
        name: "node-not-ready",
        after: "fault-injected",
        minMs: 0,
        maxMs: 10_000,
        why: 'the kubelet reports Ready=False "node is shutting down" before ending pods',
      }),
      inputs.within({
        name: "node-ready-unknown",
        after: "node-not-ready",
        minMs: monitorGraceMs,
        // One monitor pass to notice the NotReady status, the grace, one more pass to act on it.
        maxMs: monitorGraceMs + 2 * monitorPeriodMs,
        why: `the NotReady status was the kubelet's last word; Unknown after --node-monitor-grace-period (${monitorGraceMs / 1000}s), seen at a monitor pass`,
      }),
      ...(["deployment", "statefulset"] as const).map((id) =>
        inputs.within({
          name: `${id}:pod-terminated`,
          after: "fault-injected",
          minMs: 0,
          maxMs: grace,
          why: `the kubelet ends regular pods within shutdownGracePeriod (${grace / 1000}s) minus the critical pods' share`,
        }),
      ),
      inputs.within({
        name: "deployment:recovered",
        after: "deployment:pod-terminated",
        minMs: 0,
        maxMs: podStartMs + 5_000,
        why: "the ReplicaSet replaces a terminated pod at once; scheduled elsewhere (the node is tainted not-ready)",
      }),
      inputs.within({
        name: "statefulset:recovered",
        after: "statefulset:pod-terminated",
        minMs: 0,
        maxMs: podStartMs + attachMs + 10_000,
        why: "the StatefulSet deletes the terminated pod and recreates it; the unmounted volume detaches and attaches elsewhere",
      }),
      {
        name: "event:NothingToRelease",
        after: "fault-injected",
        minMs: detect.minMs,
        maxMs: detect.maxMs + grace,
        why: "the controller sees the silent node but nothing on it to release",
      },
      ...noFence("a gracefully shut down node releases its workloads itself"),
    ];
  },
  workloads: nodeLossWorkloads,
  async run(context) {
    const { steps, inputs } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    await context.startController();
    await shutNodeDown(context, node);
    await context.awaitMilestone("statefulset:recovered");
    await context.awaitMilestone("deployment:recovered");
    await context.awaitMilestone("event:NothingToRelease");
    await context.awaitMilestone("node-ready-unknown");
    const watchMs = 3 * inputs.controller.checkIntervalMs + inputs.slackMs;
    await steps.step(`watch ${watchMs / 1000}s more: no fence may start`, () =>
      sleep(watchMs, context.signal),
    );
  },
});

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [gracefulShutdownNoFence];
