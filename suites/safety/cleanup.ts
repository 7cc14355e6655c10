// Safety: what usually blocks a node's cleanup does not block the controller's. A DaemonSet that
// tolerates everything and a pod its finalizer keeps sit on the lost node; the cleanup ends anyway
// and the taints are lifted once the node is back.
import { OUT_OF_SERVICE_MILESTONE } from "../../lib/expect/model.js";
import { k8s } from "../../lib/kube/client.js";
import { pollUntil } from "../../lib/util/time.js";
import {
  deployWebAndDb,
  expectedControllerRecovery,
  nodeLossWorkloads,
  stopNodeAbruptly,
} from "../../lib/scenario/common.js";
import { startSafetyController } from "../../lib/scenario/safety.js";
import { safetyScenario } from "./define.js";
import { NODE_POWERED_ON } from "./shared.js";

const FINALIZER = "rekindle.dev/test-keeps-this-pod";

export const daemonSetAndFinalizer = safetyScenario({
  id: "safety/daemonset-and-finalizer",
  title:
    "a DaemonSet that tolerates everything and a pod kept by a finalizer on the lost node: cleanup still ends, the taints are lifted",
  requires: ["lifecycle", "fencing"],
  powerOffs: 1,
  windows: (inputs) => {
    const c = inputs.controller;
    return [
      ...expectedControllerRecovery(inputs),
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
  recoveryOf: "every workload",
  marks: [NODE_POWERED_ON],
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
  },
});
