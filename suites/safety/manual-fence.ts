// Safety with the manual fence driver: a person confirms power-off by hand. An old confirmation
// left on the node from an earlier incident must not confirm the next incident's fence.
import { ManualFenceDriver, POWER_STATE_ANNOTATION } from "../../lib/controller/drivers/manual.js";
import { OUT_OF_SERVICE_MILESTONE } from "../../lib/expect/model.js";
import { k8s } from "../../lib/kube/client.js";
import { OUT_OF_SERVICE_TAINT, hasTaint, readNode } from "../../lib/kube/queries.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import {
  deployWebAndDb,
  nodeLossWorkloads,
  registerWaitBack,
  stopNodeAbruptly,
} from "../../lib/scenario/common.js";
import { powerBackOn } from "../../lib/scenario/safety.js";
import { safetyScenario } from "./define.js";
import { nodeFence } from "./shared.js";

const SECOND_INCIDENT = "second-incident";
const STALE_CONFIRMATION = "unsafe:confirmed-by-an-earlier-incident";

export const manualSecondIncident = safetyScenario({
  id: "safety/manual-fence-second-incident",
  title:
    "a second incident on a node fenced by hand before: the earlier power-off confirmation does not confirm the new fence",
  requires: ["lifecycle"],
  powerOffs: 0,
  never: { [STALE_CONFIRMATION]: "only a confirmation written after the fence started confirms it" },
  windows: (inputs) => [
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
  recoveryOf: "every workload",
  marks: [SECOND_INCIDENT, STALE_CONFIRMATION],
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
    registerWaitBack(context, node);
    await steps.step(`incident 2: stop ${node} again`, async () => {
      await context.faults.inject({ action: { kind: "stop" }, nodes: [node] });
      context.mark(SECOND_INCIDENT);
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
  },
});
