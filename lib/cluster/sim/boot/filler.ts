// Filler workloads (`--pods-per-node N`): N pods bound to each fleet worker, so the API server,
// etcd and the controllers hold and watch an object count like a real cluster's of that size.
// Pods on kwok nodes cost nothing but their API objects. They are bare pods bound by nodeName:
// creating them takes neither the scheduler nor the ReplicaSet controller's client (20 QPS in
// kube-controller-manager), which would make a 1000-node boot take many minutes; once created they
// are ordinary pods: tainted nodes evict them, PodGC collects them. Only fleet workers get them, so
// the workers scenarios act on (their own kwok) hold the same pods as in a small cluster.
import { RUN_LABEL } from "../../../kube/apply.js";
import { isNotFound, k8s } from "../../../kube/client.js";
import { inBatches } from "../../../util/batches.js";
import { pollUntil } from "../../../util/time.js";
import type { BootStep } from "./steps.js";
import type { SimBootContext } from "./context.js";

export const SIM_FILLER_NAMESPACE = "rekindle-filler";
const CREATE_CONCURRENCY = 16;
/** The wait for every filler pod Running: a minute plus 20 ms a pod (kwok starts them in batches). */
const RUNNING_BASE_MS = 60_000;
const RUNNING_PER_POD_MS = 20;

export function fillerPod(node: string, ordinal: number, runId: string): k8s.V1Pod {
  return {
    metadata: {
      name: `filler-${node}-${ordinal}`,
      namespace: SIM_FILLER_NAMESPACE,
      labels: { app: "rekindle-filler", [RUN_LABEL]: runId },
    },
    spec: {
      nodeName: node,
      containers: [
        {
          name: "filler",
          image: "registry.k8s.io/pause:3.10.1",
          resources: { requests: { cpu: "10m", memory: "16Mi" } },
        },
      ],
    },
  };
}

async function ensureNamespace(
  core: k8s.CoreV1Api,
  runId: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  try {
    await core.readNamespace({ name: SIM_FILLER_NAMESPACE });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await core.createNamespace({
      body: { metadata: { name: SIM_FILLER_NAMESPACE, labels: { [RUN_LABEL]: runId } } },
    });
  }
  // Pods are refused until the namespace's default ServiceAccount exists.
  await pollUntil(
    async () => {
      try {
        await core.readNamespacedServiceAccount({ name: "default", namespace: SIM_FILLER_NAMESPACE });
        return true;
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    {
      what: `the default ServiceAccount of ${SIM_FILLER_NAMESPACE}`,
      timeoutMs: 60_000,
      ...(signal ? { signal } : {}),
    },
  );
}

export const SIM_FILLER_BOOT_STEP: BootStep<SimBootContext> = {
  name: "create the filler pods on the fleet workers",
  async run({ session, options, signal }) {
    const fleet = session.state.nodes.filter((n) => n.group !== undefined).map((n) => n.name);
    if (options.podsPerNode === 0 || fleet.length === 0) return "none asked for";
    const core = session.kubeConfig().makeApiClient(k8s.CoreV1Api);
    const runId = session.state.runId;
    await ensureNamespace(core, runId, signal);
    const pods = fleet.flatMap((node) =>
      Array.from({ length: options.podsPerNode }, (_, i) => fillerPod(node, i + 1, runId)),
    );
    await inBatches(pods, CREATE_CONCURRENCY, async (body) => {
      await core.createNamespacedPod({ namespace: SIM_FILLER_NAMESPACE, body });
    });
    await pollUntil(
      async () => {
        const list = await core.listNamespacedPod({ namespace: SIM_FILLER_NAMESPACE });
        const running = list.items.filter((p) => p.status?.phase === "Running").length;
        return running >= pods.length ? true : undefined;
      },
      {
        what: `${pods.length} filler pods Running`,
        timeoutMs: RUNNING_BASE_MS + pods.length * RUNNING_PER_POD_MS,
        intervalMs: 2_000,
        ...(signal ? { signal } : {}),
      },
    );
    return `${pods.length} Running (${options.podsPerNode} on each of ${fleet.length} fleet workers)`;
  },
};
