// Graceful node shutdown: the kubelet sees the shutdown coming, marks the node NotReady ("node is
// shutting down"), ends its pods with reason Terminated, and only then goes silent. Workloads move
// on their own (a terminated StatefulSet pod is replaced at once), so the controller must not fence
// a node that holds nothing to release. The node lifecycle controller still marks the silent node
// Unknown once node-monitor-grace-period has passed since its last status.
//
// An attached volume may stay behind: the kubelet reports node.status.volumesInUse only at its
// status cadence, and a node that halts before the next report still lists the volume, so the
// attach-detach controller will not detach it for 6 minutes (kind with rekindle-csi: the replacement
// hit Multi-Attach 0.4 s after it was placed). The node then holds something to release, and the
// controller fences it (the power-off finds it off). Which of the two happens is read from the
// kubelet's last report once the node is down, and the run is judged by that branch's timeline.
import type { ExpectationInputs } from "../lib/scenario/harness.js";
import { OUT_OF_SERVICE_MILESTONE } from "../lib/expect/model.js";
import type { ExpectedMilestone } from "../lib/expect/windows.js";
import { readNode } from "../lib/kube/queries.js";
import { sleep } from "../lib/util/time.js";
import { defineScenario } from "../lib/scenario/harness.js";
import {
  controllerTiming,
  deployWebAndDb,
  detectionWindow,
  noFence,
  nodeLossWorkloads,
  shutNodeDown,
} from "../lib/scenario/common.js";

export const gracefulShutdownNoFence = defineScenario({
  id: "graceful-shutdown/no-fence",
  title:
    "an orderly node shutdown: pods end with reason Terminated, workloads move, no fence (unless the kubelet halted still reporting a volume in use)",
  requires: ["graceful-shutdown", "lifecycle"],
  usesController: true,
  expected: (inputs) => gracefulShutdownExpected(inputs, false),
  note: () =>
    "when the kubelet's last report still lists the volume in use (it halted before its next status update), the run is judged by the fenced timeline instead: the controller fences the node, and the volume detaches at the out-of-service taint",
  workloads: nodeLossWorkloads,
  async run(context) {
    const { steps, inputs } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    await context.startController();
    await shutNodeDown(context, node);
    const held = await steps.step(`read ${node}'s last volumesInUse report`, async () => {
      const inUse = (await readNode(context.kc, node)).status?.volumesInUse ?? [];
      context.progress.info(`${node} last reported volumes in use: ${inUse.join(", ") || "none"}`);
      return inputs.volumeAttachRequired && inUse.length > 0;
    });
    if (held) context.expectTimeline(gracefulShutdownExpected(inputs, true));
    await context.awaitMilestone("statefulset:recovered");
    await context.awaitMilestone("deployment:recovered");
    if (held) {
      await context.awaitMilestone(OUT_OF_SERVICE_MILESTONE);
      // Its timeline still expects the node lifecycle controller's Unknown, which may come later.
      await context.awaitMilestone("node-ready-unknown");
      return;
    }
    await context.awaitMilestone("event:NothingToRelease");
    await context.awaitMilestone("node-ready-unknown");
    const watchMs = 3 * inputs.controller.checkIntervalMs + inputs.slackMs;
    await steps.step(`watch ${watchMs / 1000}s more: no fence may start`, () =>
      sleep(watchMs, context.signal),
    );
  },
});

/**
 * The expected timeline; `volumeHeld`: the kubelet's last report still listed the volume in use, so
 * it stays attached to the silent node until the controller fences it and taints it out-of-service.
 */
export function gracefulShutdownExpected(
  inputs: ExpectationInputs,
  volumeHeld: boolean,
): ExpectedMilestone[] {
  const grace = inputs.eviction.shutdownGracePeriodMs;
  const monitorGraceMs = inputs.profile.nodeMonitorGracePeriodSeconds * 1000;
  const monitorPeriodMs = inputs.profile.nodeMonitorPeriodSeconds * 1000;
  const { podStartMs } = inputs.latencies;
  // The kubelet halts and the node powers off: read off early at its first missed renewal.
  const detect = detectionWindow(inputs, { poweredOff: true });
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
    ...(volumeHeld ? fencedRelease(inputs, detect, grace) : releasedByItself(inputs, detect, grace)),
  ];
}

/** The kubelet's last report listed no volume in use: the node holds nothing, nothing is fenced. */
function releasedByItself(
  inputs: ExpectationInputs,
  detect: { minMs: number; maxMs: number },
  grace: number,
): ExpectedMilestone[] {
  const { podStartMs, attachMs } = inputs.latencies;
  return [
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
}

/**
 * The kubelet's last report still listed the volume: its VolumeAttachment stays, the replacement
 * hits Multi-Attach, and the controller fences the silent node that holds it, then taints it
 * out-of-service, which lets the attach-detach controller detach at once.
 */
function fencedRelease(
  inputs: ExpectationInputs,
  detect: { minMs: number; maxMs: number },
  grace: number,
): ExpectedMilestone[] {
  const { podStartMs, attachMs, attachSeenMs = 0 } = inputs.latencies;
  // The node is already off: the driver confirms at once, as for any node that powers off at once.
  const { fenceMs } = controllerTiming(inputs.controller);
  return [
    inputs.within({
      name: "statefulset:multi-attach",
      after: "statefulset:replacement-created",
      minMs: 0,
      maxMs: 2_000,
      why: "the kubelet halted before reporting the volume unmounted: still attached to the silent node, Multi-Attach",
    }),
    {
      name: "event:FenceStarted",
      after: "fault-injected",
      minMs: detect.minMs,
      maxMs: detect.maxMs + grace,
      why: "the controller sees the silent node still holding a VolumeAttachment: fencing it releases it",
    },
    inputs.within({
      name: OUT_OF_SERVICE_MILESTONE,
      after: "event:FenceStarted",
      minMs: 0,
      maxMs: fenceMs,
      why: `the power-off finds the node already off, confirmed at the next check (${fenceMs} ms); then the out-of-service taint`,
    }),
    inputs.within({
      name: "statefulset:va-gone",
      after: OUT_OF_SERVICE_MILESTONE,
      minMs: 0,
      maxMs: 2_000,
      why: "out-of-service: the attach-detach controller detaches at once",
    }),
    inputs.within({
      name: "statefulset:recovered",
      after: "statefulset:va-gone",
      minMs: 0,
      maxMs: podStartMs + attachMs + attachSeenMs + 2_000,
      why: `attached on the new node, seen by the kubelet (up to ${attachSeenMs} ms), then container start`,
    }),
  ];
}

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [gracefulShutdownNoFence];
