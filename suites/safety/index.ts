// Safety: the recovery controller under hostile conditions. Each scenario injects one condition a
// real cluster has and today's sim would not show, and asserts from the API that no reachable node
// is fenced, no out-of-service taint comes before a confirmed fence, one incident gives one
// power-off, and nothing of the controller's is left once the node is back (lib/scenario/safety.ts).
import { ManualFenceDriver, POWER_STATE_ANNOTATION } from "../../lib/controller/drivers/manual.js";
import type { FenceDriver, FenceTarget } from "../../lib/controller/drivers/types.js";
import {
  NODE_FENCE_GROUP,
  NODE_FENCE_PLURAL,
  NODE_FENCE_VERSION,
  type FenceAction,
  type NodeFence,
} from "../../lib/controller/fence-state.js";
import { leaseRenewIntervalMs } from "../../lib/cluster/profiles.js";
import { OUT_OF_SERVICE_MILESTONE } from "../../lib/expect/model.js";
import { k8s } from "../../lib/kube/client.js";
import { OUT_OF_SERVICE_TAINT, hasTaint, readNode } from "../../lib/kube/queries.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import {
  deployWebAndDb,
  detectionWindow,
  expectedControllerRecovery,
  never,
  noFence,
  nodeLossWorkloads,
  stopNodeAbruptly,
} from "../../lib/scenario/common.js";
import { defineScenario, type ExpectationInputs, type ScenarioContext } from "../../lib/scenario/harness.js";
import {
  checkNothingLeftBehind,
  fenceStartedTwice,
  powerBackOn,
  deriveUnsafe,
  occupyEveryWorker,
  SAFETY_MILESTONES,
  safetyExpectations,
  scenarioLeaderElection,
  startSafetyController,
} from "../../lib/scenario/safety.js";
import { NodeFenceStore } from "../../lib/controller/node-fence-store.js";
import { ZONE_LABEL } from "../../lib/kube/queries.js";
import { badFenceConfigRefused } from "./bad-config.js";

const NODE_POWERED_ON = "node-powered-on";
const HOLD_RELEASED = "hold-released";
/** A powered-on node's agent runs again within this (the node then renews at its next interval). */
const NODE_BACK_MS = 2_000;

function nodeFence(kc: k8s.KubeConfig, node: string): Promise<NodeFence | undefined> {
  return new NodeFenceStore(kc).read(node);
}

/** How long a "must not fence" scenario keeps watching after the condition ends. */
function watchAfterMs(inputs: ExpectationInputs): number {
  return (
    inputs.controller.unhealthyAfterMs +
    inputs.profile.nodeLeaseDurationSeconds * 250 +
    4 * inputs.controller.checkIntervalMs
  );
}

/**
 * The node is powered back on while the controller is held right before `action` (taint or
 * cleanup): released, the same controller must notice the node running and abandon the fence.
 */
function poweredOnBefore(action: "taint" | "cleanup") {
  const reached = action === "taint" ? "fence:power-management:done" : OUT_OF_SERVICE_MILESTONE;
  return defineScenario({
    id: `safety/powered-on-before-${action}`,
    title: `the node is powered back on between ${action === "taint" ? "fence and taint" : "taint and cleanup"}: no ${action === "taint" ? "out-of-service taint" : "force deletion"}, the fence is abandoned`,
    requires: ["lifecycle", "fencing"],
    usesController: true,
    expected: (inputs) => {
      const c = inputs.controller;
      return [
        ...safetyExpectations(1),
        ...(action === "taint"
          ? [never(OUT_OF_SERVICE_MILESTONE, "the node runs again: it is never tainted out-of-service")]
          : []),
        never("event:PodsForceDeleted", "no pod of a running node is force-deleted by the controller"),
        never("event:VolumeAttachmentsRemoved", "no volume of a running node is released by the controller"),
        inputs.within({
          name: "event:FenceAbandoned",
          after: HOLD_RELEASED,
          minMs: 0,
          maxMs: 2 * c.checkIntervalMs,
          why: "the controller re-checks before it acts, sees the node renewing, and abandons the fence",
        }),
        inputs.within({
          name: "fence:recovery:done",
          after: HOLD_RELEASED,
          minMs: 0,
          maxMs:
            NODE_BACK_MS +
            leaseRenewIntervalMs(inputs.profile) +
            c.healthyBeforeUnfenceMs +
            4 * c.checkIntervalMs +
            inputs.profile.defaultNotReadyTolerationSeconds * 1000,
          why: `its taints are lifted once it is back and has been healthy ${c.healthyBeforeUnfenceMs / 1000}s, and its evicted pods are gone`,
        }),
      ];
    },
    workloads: nodeLossWorkloads,
    recoveryOf: [],
    async run(context) {
      const { steps, cluster } = context;
      const { statefulSetNode: node } = await deployWebAndDb(context);
      let held = true;
      const powerOffs = { count: 0 };
      await startSafetyController(context, powerOffs, {
        haltBefore: (a: FenceAction) => held && a === action,
      });
      await stopNodeAbruptly(context, node);
      await context.awaitMilestone(reached);
      await steps.step(`power ${node} back on while the controller is held before ${action}`, async () => {
        await cluster.capabilities.lifecycle.startNode(node);
        context.mark(NODE_POWERED_ON);
      });
      // Released as soon as the node runs, before it is Ready again: the controller's next step
      // would be the held one (taint or cleanup); it must re-read the power state and abandon. (Released
      // only once the node was Ready, the controller could see it back and abandon first, before
      // the release: CI saw that once, 0.1 s before.)
      await steps.step("release the controller", () => {
        held = false;
        context.mark(HOLD_RELEASED);
        return Promise.resolve();
      });
      await steps.step(`wait until ${node} is back`, () => context.waitNodeBack(node));
      await context.awaitMilestone("event:FenceAbandoned");
      await context.awaitMilestone("fence:recovery:done");
      await checkNothingLeftBehind(context);
    },
    ownMilestones: [...SAFETY_MILESTONES, NODE_POWERED_ON, HOLD_RELEASED],
    derive: deriveUnsafe,
  });
}

export const poweredOnBeforeTaint = poweredOnBefore("taint");
export const poweredOnBeforeCleanup = poweredOnBefore("cleanup");

const FINALIZER = "rekindle.dev/test-keeps-this-pod";

export const daemonSetAndFinalizer = defineScenario({
  id: "safety/daemonset-and-finalizer",
  title:
    "a DaemonSet that tolerates everything and a pod kept by a finalizer on the lost node: cleanup still ends, the taints are lifted",
  requires: ["lifecycle", "fencing"],
  usesController: true,
  expected: (inputs) => {
    const c = inputs.controller;
    return [
      ...expectedControllerRecovery(inputs),
      ...safetyExpectations(1),
      inputs.within({
        name: "fence:cleanup:done",
        after: OUT_OF_SERVICE_MILESTONE,
        minMs: 0,
        maxMs: c.detachGraceMs + 4 * c.checkIntervalMs,
        why: "DaemonSet pods are the node's own and a finalizer-held pod is released: nothing blocks cleanup",
      }),
      inputs.within({
        name: "event:CleanupIncomplete",
        after: OUT_OF_SERVICE_MILESTONE,
        minMs: 0,
        maxMs: c.detachGraceMs + 4 * c.checkIntervalMs,
        why: "the pod its finalizer keeps is named, once",
      }),
      inputs.within({
        name: "fence:recovery:done",
        after: NODE_POWERED_ON,
        minMs: c.healthyBeforeUnfenceMs,
        maxMs: c.healthyBeforeUnfenceMs + inputs.profile.nodeLeaseDurationSeconds * 250 + 10_000,
        why: "the returned node's taints are lifted; the finalizer-held pod does not hold them",
      }),
    ];
  },
  workloads: nodeLossWorkloads,
  async run(context) {
    const { steps, kc, namespace, cluster } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    await steps.step(
      "run a DaemonSet that tolerates everything (as kube-proxy and every CNI do)",
      async () => {
        await apps.createNamespacedDaemonSet({
          namespace,
          body: {
            metadata: { name: "tolerates-everything" },
            spec: {
              selector: { matchLabels: { app: "tolerates-everything" } },
              template: {
                metadata: { labels: { app: "tolerates-everything" } },
                spec: {
                  tolerations: [{ operator: "Exists" }],
                  terminationGracePeriodSeconds: 0,
                  containers: [{ name: "pause", image: "registry.k8s.io/pause:3.10.1" }],
                },
              },
            },
          },
        });
        await pollUntil(
          async () => {
            const pods = await core.listNamespacedPod({
              namespace,
              labelSelector: "app=tolerates-everything",
            });
            return pods.items.some((p) => p.spec?.nodeName === node && p.status?.phase === "Running")
              ? true
              : undefined;
          },
          { what: `the DaemonSet's pod Running on ${node}`, timeoutMs: 60_000 },
        );
      },
    );
    await steps.step(`put a pod that a finalizer keeps on ${node}`, async () => {
      await core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: "kept-by-finalizer", finalizers: [FINALIZER] },
          spec: { nodeName: node, containers: [{ name: "pause", image: "registry.k8s.io/pause:3.10.1" }] },
        },
      });
    });
    steps.registerUndo("remove the test finalizer", async () => {
      await core
        .patchNamespacedPod(
          { namespace, name: "kept-by-finalizer", body: { metadata: { finalizers: null } } },
          k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
        )
        .catch(() => undefined);
    });
    await startSafetyController(context, { count: 0 });
    await stopNodeAbruptly(context, node);
    await context.awaitMilestone("statefulset:recovered");
    await context.awaitMilestone("fence:cleanup:done");
    await steps.step(`power ${node} back on`, async () => {
      await cluster.capabilities.lifecycle.startNode(node);
      context.mark(NODE_POWERED_ON);
      await context.waitNodeBack(node);
    });
    await context.awaitMilestone("fence:recovery:done");
    await checkNothingLeftBehind(context);
  },
  ownMilestones: [...SAFETY_MILESTONES, NODE_POWERED_ON],
  derive: deriveUnsafe,
});

const SECOND_INCIDENT = "second-incident";
const STALE_CONFIRMATION = "unsafe:confirmed-by-an-earlier-incident";

export const manualSecondIncident = defineScenario({
  id: "safety/manual-fence-second-incident",
  title:
    "a second incident on a node fenced by hand before: the earlier power-off confirmation does not confirm the new fence",
  requires: ["lifecycle"],
  usesController: true,
  expected: (inputs) => [
    ...safetyExpectations(0),
    never(STALE_CONFIRMATION, "only a confirmation written after the fence started confirms it"),
    inputs.within({
      name: "statefulset:recovered",
      after: OUT_OF_SERVICE_MILESTONE,
      minMs: 0,
      maxMs:
        inputs.controller.detachGraceMs +
        4 * inputs.controller.checkIntervalMs +
        inputs.latencies.attachMs +
        inputs.latencies.podStartMs,
      why: "incident 1, confirmed by hand: force delete, detach, attach elsewhere, start",
    }),
  ],
  workloads: nodeLossWorkloads,
  note: () => "the manual driver: the scenario plays the person who powers the node off and confirms",
  async run(context) {
    const { steps, kc, cluster, inputs } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const manual = new ManualFenceDriver(kc);
    await context.startController({
      drivers: new Map([[manual.name, manual]]),
      fenceConfig: { templates: { manual: { driver: "manual" } }, defaultTemplate: "manual" },
      config: { fenceConfirmTimeoutMs: 300_000 },
    });
    const confirm = (value: "off" | null) =>
      core.patchNode(
        { name: node, body: { metadata: { annotations: { [POWER_STATE_ANNOTATION]: value } } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
    steps.registerUndo(`remove ${POWER_STATE_ANNOTATION} from ${node}`, async () => {
      await confirm(null).catch(() => undefined);
    });
    // Incident 1, confirmed by the person once the fence started.
    await stopNodeAbruptly(context, node);
    await context.awaitMilestone("event:FenceStarted");
    await steps.step(`confirm ${node} off by hand (incident 1)`, () => confirm("off"));
    await context.awaitMilestone(OUT_OF_SERVICE_MILESTONE);
    await context.awaitMilestone("statefulset:recovered");
    await steps.step(`power ${node} back on and wait for its fence to finish`, async () => {
      await cluster.capabilities.lifecycle.startNode(node);
      await context.waitNodeBack(node);
      await pollUntil(
        async () =>
          (await nodeFence(kc, node))?.status?.phase === "done" &&
          (await nodeFence(kc, node))?.status?.step === "recovery"
            ? true
            : undefined,
        { what: `the first fence of ${node} finished`, timeoutMs: 120_000 },
      );
    });
    // Its workloads moved away in incident 1: give it something to release again.
    await steps.step(`run a pod on ${node} again`, async () => {
      await core.createNamespacedPod({
        namespace: context.namespace,
        body: {
          metadata: { name: "second-incident-occupant" },
          spec: { nodeName: node, containers: [{ name: "pause", image: "registry.k8s.io/pause:3.10.1" }] },
        },
      });
      await pollUntil(
        async () =>
          (await core.readNamespacedPod({ namespace: context.namespace, name: "second-incident-occupant" }))
            .status?.phase === "Running"
            ? true
            : undefined,
        { what: `a pod Running on ${node}`, timeoutMs: 30_000 },
      );
    });
    // A sloppy runbook leaves (or puts back) the old confirmation.
    await steps.step(`leave ${POWER_STATE_ANNOTATION}=off on ${node} from incident 1`, () => confirm("off"));
    await steps.step(`incident 2: stop ${node} again`, async () => {
      await cluster.capabilities.lifecycle.stopNode(node);
      context.mark(SECOND_INCIDENT);
    });
    steps.registerUndo(`start ${node} after incident 2 and wait until it is back`, async () => {
      await cluster.capabilities.lifecycle.startNode(node);
      await context.waitNodeBack(node);
    });
    const secondStart = Date.now();
    await steps.step("wait for the second fence to start", () =>
      pollUntil(
        async () => {
          const f = await nodeFence(kc, node);
          const detected = Date.parse(f?.status?.detectedAt ?? "");
          return detected >= secondStart - 1_000 ? f : undefined;
        },
        { what: `the second fence of ${node}`, timeoutMs: 2 * inputs.controller.unhealthyAfterMs + 30_000 },
      ),
    );
    await steps.step("give the controller time to (wrongly) accept the old confirmation", async () => {
      await sleep(6 * inputs.controller.checkIntervalMs, context.signal);
      const f = await nodeFence(kc, node);
      const tainted = hasTaint(await readNode(kc, node), OUT_OF_SERVICE_TAINT);
      if (f?.status?.step !== "power-management" || f.status.phase === "done" || tainted) {
        context.mark(STALE_CONFIRMATION);
      }
    });
    await steps.step(`confirm ${node} off by hand (incident 2)`, () => confirm("off"));
    await steps.step(`wait for ${node} to be tainted out-of-service again`, () =>
      pollUntil(async () => (hasTaint(await readNode(kc, node), OUT_OF_SERVICE_TAINT) ? true : undefined), {
        what: `${node} tainted after the second confirmation`,
        timeoutMs: 30_000,
      }),
    );
    await powerBackOn(context, node);
    await checkNothingLeftBehind(context);
  },
  ownMilestones: [...SAFETY_MILESTONES, SECOND_INCIDENT, STALE_CONFIRMATION],
  derive: deriveUnsafe,
});

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
    const detect = detectionWindow(inputs);
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
  derive: (transitions, ctx) => [
    ...deriveUnsafe(transitions, ctx),
    ...fenceStartedTwice(transitions, ctx.faultAtMs),
  ],
});

const NODEFENCE_DELETED = "nodefence-deleted";

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
    const { statefulSetNode: node } = await deployWebAndDb(context);
    await startSafetyController(context, { count: 0 });
    await stopNodeAbruptly(context, node);
    await context.awaitMilestone(OUT_OF_SERVICE_MILESTONE);
    await steps.step(`delete the NodeFence of ${node} by hand`, async () => {
      await kc.makeApiClient(k8s.CustomObjectsApi).deleteClusterCustomObject({
        group: NODE_FENCE_GROUP,
        version: NODE_FENCE_VERSION,
        plural: NODE_FENCE_PLURAL,
        name: node,
      });
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
  derive: (transitions, ctx) => [
    ...deriveUnsafe(transitions, ctx),
    ...fenceStartedTwice(transitions, ctx.faultAtMs),
  ],
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
    const { statefulSetNode: node } = await deployWebAndDb(context);
    const powerOffs = { count: 0 };
    let controller = await startSafetyController(context, powerOffs, {
      haltBefore: KILL_POINTS[0]?.before ?? "power-off",
    });
    await stopNodeAbruptly(context, node);
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
  derive: (transitions, ctx) => [
    ...deriveUnsafe(transitions, ctx),
    ...fenceStartedTwice(transitions, ctx.faultAtMs),
  ],
});

/** Every worker of the zone with the most workers. */
async function largestZone(context: ScenarioContext): Promise<string[]> {
  const workers = new Set(await context.cluster.workerNodes());
  const zones = new Map<string, string[]>();
  for (const n of (await context.kc.makeApiClient(k8s.CoreV1Api).listNode()).items) {
    const name = n.metadata?.name ?? "";
    const zone = n.metadata?.labels?.[ZONE_LABEL];
    if (zone && workers.has(name)) zones.set(zone, [...(zones.get(zone) ?? []), name]);
  }
  return [...zones.values()].sort((a, b) => b.length - a.length)[0] ?? [];
}

const PARTITION_HEALED = "partition-healed";

export const zonePartitionHealed = defineScenario({
  id: "safety/zone-partition-healed",
  title:
    "a zone partitioned past unhealthyAfter, then healed: the guard holds meanwhile, and no node is fenced while they renew one by one",
  requires: ["partition", "fencing"],
  usesController: true,
  expected: () => [...safetyExpectations(0), ...noFence("the zone's nodes are alive and renew once healed")],
  workloads: () => [],
  recoveryOf: [],
  async run(context) {
    const { steps, cluster, inputs } = context;
    await occupyEveryWorker(context);
    const zone = await largestZone(context);
    await startSafetyController(context, { count: 0 });
    await steps.step(`partition zone nodes ${zone.join(", ")}`, async () => {
      context.faultStarts(zone);
      for (const node of zone) await cluster.capabilities.partition.partitionNode(node);
    });
    steps.registerUndo(`heal ${zone.join(", ")}`, async () => {
      for (const node of zone) await cluster.capabilities.partition.healNode(node);
    });
    const cutMs = 2 * inputs.controller.unhealthyAfterMs;
    await steps.step(`keep the zone cut off ${cutMs / 1000}s (past unhealthyAfter)`, () =>
      sleep(cutMs, context.signal),
    );
    await steps.step(`heal ${zone.join(", ")}`, async () => {
      for (const node of zone) await cluster.capabilities.partition.healNode(node);
      context.mark(PARTITION_HEALED);
    });
    await steps.step(`watch ${watchAfterMs(inputs) / 1000}s more: no fence may start`, () =>
      sleep(watchAfterMs(inputs), context.signal),
    );
    await checkNothingLeftBehind(context);
  },
  ownMilestones: [...SAFETY_MILESTONES, PARTITION_HEALED],
  derive: deriveUnsafe,
});

const CLOCK_OFFSET_MS = -30_000;

export const kubeletClockBehind = defineScenario({
  id: "safety/kubelet-clock-behind",
  title:
    "a kubelet clock steps 30 s behind: its Lease looks 30 s old to a clock-comparing controller, but it renews and is never fenced",
  requires: ["clock-skew", "fencing"],
  usesController: true,
  expected: () => [...safetyExpectations(0), ...noFence("the node renews; only its clock is wrong")],
  workloads: () => [],
  recoveryOf: [],
  note: (inputs) =>
    `watches ${(3 * inputs.controller.unhealthyAfterMs) / 1000 + 5}s with the clock 30 s behind`,
  async run(context) {
    const { steps, cluster, inputs } = context;
    const [node = ""] = await occupyEveryWorker(context);
    await startSafetyController(context, { count: 0 });
    await steps.step("let the controller see every node renew", () =>
      sleep(2 * leaseRenewIntervalMs(inputs.profile) + inputs.controller.checkIntervalMs, context.signal),
    );
    const clock = cluster.capabilities["clock-skew"];
    await steps.step(`step ${node}'s kubelet clock ${-CLOCK_OFFSET_MS / 1000}s behind`, async () => {
      context.faultStarts([node]);
      await clock.setClockOffset(node, CLOCK_OFFSET_MS, { step: true });
    });
    steps.registerUndo(`set ${node}'s kubelet clock right`, () => clock.clearClockOffset(node));
    const watchMs = 3 * inputs.controller.unhealthyAfterMs + 5_000;
    await steps.step(`watch ${watchMs / 1000}s: no fence may start`, () => sleep(watchMs, context.signal));
    await steps.step(`set ${node}'s kubelet clock right`, () => clock.clearClockOffset(node));
    await checkNothingLeftBehind(context);
  },
  ownMilestones: [...SAFETY_MILESTONES],
  derive: deriveUnsafe,
});

const API_RESUMED = "apiserver-resumed";

export const apiServerPaused = defineScenario({
  id: "safety/apiserver-paused",
  title:
    "kube-apiserver freezes for three times unhealthyAfter: every Lease is stale when it answers again, and no node is fenced while they renew",
  requires: ["apiserver-pause", "fencing"],
  usesController: true,
  expected: () => [
    ...safetyExpectations(0),
    ...noFence("nobody could renew while the API server was frozen"),
  ],
  workloads: () => [],
  recoveryOf: [],
  async run(context) {
    const { steps, cluster, inputs } = context;
    const workers = await occupyEveryWorker(context);
    await startSafetyController(context, { count: 0 });
    await steps.step("let the controller see every node renew", () =>
      sleep(2 * leaseRenewIntervalMs(inputs.profile) + inputs.controller.checkIntervalMs, context.signal),
    );
    const pauseMs = 3 * inputs.controller.unhealthyAfterMs;
    await steps.step(`freeze kube-apiserver for ${pauseMs / 1000}s`, async () => {
      context.faultStarts(workers);
      await cluster.capabilities["apiserver-pause"].pauseApiServer(pauseMs);
      context.mark(API_RESUMED);
    });
    await steps.step(`watch ${watchAfterMs(inputs) / 1000}s more: no fence may start`, () =>
      sleep(watchAfterMs(inputs), context.signal),
    );
    await checkNothingLeftBehind(context);
  },
  ownMilestones: [...SAFETY_MILESTONES, API_RESUMED],
  derive: deriveUnsafe,
});

const REREGISTERED = "node-reregistered";

export const nodeReregisteredMidFence = defineScenario({
  id: "safety/node-reregistered-mid-fence",
  title:
    "the node is deleted and registered again (a new UID) between fence and taint: the fence ends without touching the new Node object",
  requires: ["lifecycle", "node-reregistration", "fencing"],
  usesController: true,
  expected: (inputs) => [
    ...safetyExpectations(1),
    never(OUT_OF_SERVICE_MILESTONE, "the new Node object is never tainted for the old one's fence"),
    inputs.within({
      name: "event:FenceSuperseded",
      after: HOLD_RELEASED,
      minMs: 0,
      maxMs: 2 * inputs.controller.checkIntervalMs,
      why: "the fence is bound to the old Node's UID: it ends at the next pass",
    }),
  ],
  workloads: nodeLossWorkloads,
  recoveryOf: [],
  async run(context) {
    const { steps, cluster, kc } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    let held = true;
    await startSafetyController(
      context,
      { count: 0 },
      { haltBefore: (a: FenceAction) => held && a === "taint" },
    );
    await stopNodeAbruptly(context, node);
    await context.awaitMilestone("fence:power-management:done");
    await steps.step(`delete ${node} and register it again`, async () => {
      const uid = await cluster.capabilities["node-reregistration"].reregisterNode(node);
      context.progress.info(`${node} registered again as ${uid}`);
      context.mark(REREGISTERED);
      await context.waitNodeBack(node);
    });
    await steps.step("release the controller", () => {
      held = false;
      context.mark(HOLD_RELEASED);
      return Promise.resolve();
    });
    await context.awaitMilestone("event:FenceSuperseded");
    await steps.step(`watch 3 checks: ${node} stays untainted`, async () => {
      await sleep(3 * context.inputs.controller.checkIntervalMs, context.signal);
      const tainted = (await readNode(kc, node)).spec?.taints?.some(
        (t) => t.key.startsWith("rekindle.dev/") || t.key === OUT_OF_SERVICE_TAINT,
      );
      if (tainted === true) context.progress.info(`${node} carries a taint of the controller's`);
    });
    await checkNothingLeftBehind(context);
  },
  ownMilestones: [...SAFETY_MILESTONES, REREGISTERED, HOLD_RELEASED],
  derive: deriveUnsafe,
});

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [
  badFenceConfigRefused,
  poweredOnBeforeTaint,
  poweredOnBeforeCleanup,
  daemonSetAndFinalizer,
  manualSecondIncident,
  driverHangsTwoReplicas,
  nodeFenceDeletedByHand,
  controllerKilledAtEveryStep,
  zonePartitionHealed,
  kubeletClockBehind,
  apiServerPaused,
  nodeReregisteredMidFence,
];
