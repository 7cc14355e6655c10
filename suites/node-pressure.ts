// Node pressure: a worker runs short of memory or disk. The kubelet evicts pods one at a time in
// its order — BestEffort and over-request pods first, then by priority, then by how far usage
// exceeds the request — and reports the pressure condition at its next status update (the node
// lifecycle controller taints it NoSchedule). The fill is no pod, so no eviction relieves it: the
// kubelet goes on until every pod it may evict is gone, the Guaranteed one last. Evicted
// Deployment pods come back elsewhere. The node stays reachable, so the recovery controller must
// not fence it. Measured on kind against these windows: docs/calibration.md.
import { RekindleError } from "../lib/errors.js";
import type { PressureKind } from "../lib/cluster/provider.js";
import type { ExpectedMilestone } from "../lib/expect/model.js";
import { applyManifestFile, RUN_LABEL } from "../lib/kube/apply.js";
import { isPodReady, k8s } from "../lib/kube/client.js";
import { hasTaint, readNode } from "../lib/kube/queries.js";
import { deployPath } from "../lib/util/project-files.js";
import { pollUntil } from "../lib/util/time.js";
import { placeOnOneNode } from "../lib/workloads/one-node-placement.js";
import { defineScenario, type ExpectationInputs, type ScenarioContext } from "../lib/scenario/harness.js";
import { noFence } from "../lib/scenario/common.js";

/** After an eviction the kubelet waits for the pod's cleanup (up to 30 s) before the next one. */
const POD_CLEANUP_WAIT_MS = 30_000;

const CONDITION: Record<PressureKind, string> = { memory: "MemoryPressure", disk: "DiskPressure" };
const TAINT: Record<PressureKind, string> = {
  memory: "node.kubernetes.io/memory-pressure",
  disk: "node.kubernetes.io/disk-pressure",
};
/** The three pods, in the order the kubelet must evict them. */
export const PRESSURE_APPS = ["pressure-besteffort", "pressure-burstable", "pressure-guaranteed"] as const;
const PRESSURE_SELECTOR = `app in (${PRESSURE_APPS.join(",")})`;

/** The windows of a pressure scenario: condition and taint, evictions in kubelet order, relief. */
function pressureWindows(inputs: ExpectationInputs, condition: string, taint: string): ExpectedMilestone[] {
  const {
    monitoringIntervalMs: monitor,
    pressureTransitionPeriodMs: transition,
    statusUpdateIntervalMs: statusUpdate,
  } = inputs.eviction;
  const period = inputs.profile.nodeMonitorPeriodSeconds * 1000;
  const expected: ExpectedMilestone[] = [
    inputs.within({
      name: `node-condition:${condition}:True`,
      after: "fault-injected",
      minMs: 0,
      maxMs: monitor + statusUpdate,
      why: "the eviction manager sees the signal within one monitoring interval; the next status update reports it",
    }),
    inputs.within({
      name: `taint-added:${taint}`,
      after: `node-condition:${condition}:True`,
      minMs: 0,
      maxMs: period,
      why: "the node lifecycle controller taints by condition (NoSchedule) at its next pass",
    }),
    inputs.within({
      name: "evicted:pressure-besteffort",
      after: "fault-injected",
      minMs: 0,
      maxMs: monitor + statusUpdate,
      why: "first in the kubelet's order (a BestEffort pod always uses more than its zero request), at the pass that sees the signal: before or after the condition is in the API",
    }),
    inputs.within({
      name: "evicted:pressure-burstable",
      after: "evicted:pressure-besteffort",
      minMs: 0,
      maxMs: monitor + POD_CLEANUP_WAIT_MS,
      why: "next: the Burstable pod is within its request, but closest to it of the rest (all priority 0)",
    }),
    inputs.within({
      name: "evicted:pressure-guaranteed",
      after: "evicted:pressure-burstable",
      minMs: 0,
      maxMs: monitor + POD_CLEANUP_WAIT_MS,
      why: "last in order: evicting pods does not relieve a fill, so the kubelet goes on to the Guaranteed pod",
    }),
    inputs.within({
      name: "besteffort:recovered",
      after: "evicted:pressure-besteffort",
      minMs: 0,
      maxMs: statusUpdate + period + inputs.latencies.podStartMs + 5_000,
      why: "the ReplicaSet replaces the evicted pod; until the pressure taint is on (next status update, next monitor pass) a replacement drawn back to the node is refused at admission, then one starts elsewhere",
    }),
    ...noFence("the node is under pressure but reachable: its Lease is fresh"),
    inputs.within({
      name: `node-condition:${condition}:False`,
      after: "pressure-relieved",
      minMs: Math.max(0, transition - monitor),
      maxMs: transition + monitor + statusUpdate,
      why: `the condition stays for evictionPressureTransitionPeriod (${transition / 1000}s) after the last pass that saw the signal (up to one monitoring interval before the relief); the next status update clears it`,
    }),
    inputs.within({
      name: `taint-removed:${taint}`,
      after: `node-condition:${condition}:False`,
      minMs: 0,
      maxMs: period,
      why: "the node lifecycle controller lifts the condition's taint",
    }),
  ];
  return expected;
}

/** The three pods on `node`, all Ready there (elsewhere is a precondition failure). */
async function deployPressurePods(context: ScenarioContext<"pressure">, node: string): Promise<void> {
  const { cluster, steps, kc, namespace } = context;
  await steps.step(`deploy BestEffort, Burstable and Guaranteed pods on ${node}`, () =>
    placeOnOneNode({ kc, namespace, node, labels: { [RUN_LABEL]: cluster.runId } }, async () => {
      await applyManifestFile(kc, deployPath("workloads", "pressure.yaml"), {
        labels: { [RUN_LABEL]: cluster.runId },
        substitutions: { NAMESPACE: namespace, NODE: node },
      });
      const core = kc.makeApiClient(k8s.CoreV1Api);
      const pods = await pollUntil(
        async () => {
          const list = (await core.listNamespacedPod({ namespace, labelSelector: PRESSURE_SELECTOR })).items;
          return list.filter(isPodReady).length >= PRESSURE_APPS.length ? list : undefined;
        },
        { what: `the pressure pods Ready in ${namespace}`, timeoutMs: 180_000 },
      );
      // The blockers leave no other node; this is the check that they did.
      const elsewhere = pods.filter((p) => p.spec?.nodeName !== node);
      if (elsewhere.length > 0) {
        throw new RekindleError(
          "PRECONDITION",
          `the scheduler placed ${elsewhere.map((p) => `${p.metadata?.name ?? ""} on ${p.spec?.nodeName ?? ""}`).join(", ")}, not on ${node}`,
          { hint: `${node} needs room for three small pods; is it cordoned or full?` },
        );
      }
    }),
  );
}

function pressureScenario(kind: PressureKind) {
  const condition = CONDITION[kind];
  const taint = TAINT[kind];
  return defineScenario({
    id: `node-pressure/${kind}`,
    title: `${kind} pressure: ${condition} and its NoSchedule taint, evictions in kubelet order, replacements elsewhere, no fence`,
    requires: ["pressure"],
    usesController: true,
    expected: (inputs) => pressureWindows(inputs, condition, taint),
    workloads: (namespace) => [
      { id: "besteffort", app: "pressure-besteffort", namespace },
      { id: "burstable", app: "pressure-burstable", namespace },
    ],
    recoveryOf: ["besteffort"],
    ownMilestones: ["pressure-relieved"],
    async run(context) {
      const { cluster, steps, kc } = context;
      const [node] = await cluster.workerNodes();
      if (node === undefined)
        throw new RekindleError("PRECONDITION", "the cluster has no worker node to pressure");
      await deployPressurePods(context, node);
      await context.startController();
      // Registered before the fault's handle: runs after its revert relieved the pressure.
      steps.registerUndo(`wait for ${taint} to go from ${node}`, async () => {
        await pollUntil(async () => (hasTaint(await readNode(kc, node), taint) ? undefined : true), {
          what: `${taint} gone from ${node}`,
          timeoutMs: cluster.eviction.pressureTransitionPeriodMs + 120_000,
        });
      });
      const pressure = await steps.step(`push ${node} into ${kind} pressure`, () =>
        context.faults.inject({
          action: { kind: "pressure", pressure: kind },
          nodes: [node],
          onFirstEffect: () => {
            context.faultStarts([node]);
          },
        }),
      );
      await context.awaitMilestone(`node-condition:${condition}:True`);
      await context.awaitMilestone(`taint-added:${taint}`);
      await context.awaitMilestone("evicted:pressure-besteffort");
      await context.awaitMilestone("evicted:pressure-burstable");
      await context.awaitMilestone("evicted:pressure-guaranteed");
      await steps.step(`relieve the ${kind} pressure`, () =>
        pressure.revert({
          onReverted: () => {
            context.mark("pressure-relieved");
          },
        }),
      );
      await context.awaitMilestone("besteffort:recovered");
      await context.awaitMilestone(`node-condition:${condition}:False`);
      await context.awaitMilestone(`taint-removed:${taint}`);
    },
  });
}

export const memoryPressure = pressureScenario("memory");
export const diskPressure = pressureScenario("disk");

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [memoryPressure, diskPressure];
