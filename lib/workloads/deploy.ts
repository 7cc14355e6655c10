// The workloads a node-loss scenario watches: a Deployment, a StatefulSet without a volume and one
// with an RWO CSI volume, from fixtures/workloads, in a namespace of their own labelled with the run id.
import { applyManifestFile, RUN_LABEL } from "../kube/apply.js";
import { RekindleError } from "../errors.js";
import { k8s, isConflict, isPodReady } from "../kube/client.js";
import { fixturePath } from "../util/fixtures.js";
import { pollUntil } from "../util/time.js";
import { recreateStuckPending } from "./stuck-pending.js";

export const DEPLOYMENT_NAME = "web";
export const STATEFULSET_NAME = "db";
export const PLAIN_STATEFULSET_NAME = "cache";
/** The Deployment's replicas unless a scenario asks for another number. */
export const DEFAULT_DEPLOYMENT_REPLICAS = 2;

export interface NodeLossWorkloadOptions {
  namespace: string;
  runId: string;
  /** StorageClass of the StatefulSet's volume. Default "rekindle-sim" (the sim provider's). */
  storageClass?: string;
  /** A pod of the namespace on every schedulable node first (fixtures/workloads/presence.yaml). Default false. */
  presenceOnEveryNode?: boolean;
  /** Deployment replicas. Default DEFAULT_DEPLOYMENT_REPLICAS. */
  replicas?: number;
  /** How long to wait for everything Ready. Default 120 s. */
  readyTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface DeployedWorkloads {
  namespace: string;
  /** Node of the StatefulSet pod, which the Deployment's pods prefer too. */
  statefulSetNode: string;
  /** PersistentVolume bound to the StatefulSet pod's claim. */
  volumeName: string;
}

/** Creates the namespace labelled with the run id; one this run created already is fine, anyone else's is not. */
export async function ensureNamespace(kc: k8s.KubeConfig, name: string, runId: string): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  try {
    await core.createNamespace({ body: { metadata: { name, labels: { [RUN_LABEL]: runId } } } });
  } catch (error) {
    if (!isConflict(error)) throw error;
    const existing = await core.readNamespace({ name });
    if (existing.metadata?.labels?.[RUN_LABEL] !== runId) {
      throw new RekindleError("CONFLICT", `namespace ${name} already exists and is not this run's`, {
        hint: `delete it, or let the run pick another name (it carries no ${RUN_LABEL}=${runId} label)`,
      });
    }
  }
}

export async function listPods(kc: k8s.KubeConfig, namespace: string, app: string): Promise<k8s.V1Pod[]> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return (await core.listNamespacedPod({ namespace, labelSelector: `app=${app}` })).items;
}

export async function deployNodeLossWorkloads(
  kc: k8s.KubeConfig,
  options: NodeLossWorkloadOptions,
): Promise<DeployedWorkloads> {
  const { namespace, runId } = options;
  const timeoutMs = options.readyTimeoutMs ?? 120_000;
  const signal = options.signal ? { signal: options.signal } : {};
  const labels = { [RUN_LABEL]: runId };
  await ensureNamespace(kc, namespace, runId);
  if (options.presenceOnEveryNode === true) {
    await applyManifestFile(kc, fixturePath("workloads", "presence.yaml"), {
      labels,
      substitutions: { NAMESPACE: namespace },
    });
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    await pollUntil(
      async () => {
        const status = (await apps.readNamespacedDaemonSet({ namespace, name: "presence" })).status;
        const desired = status?.desiredNumberScheduled ?? 0;
        return desired > 0 && status?.numberReady === desired ? true : undefined;
      },
      { what: `DaemonSet ${namespace}/presence Ready on every node`, timeoutMs, ...signal },
    );
  }
  await applyManifestFile(kc, fixturePath("workloads", "statefulset-pvc.yaml"), {
    labels,
    substitutions: { NAMESPACE: namespace, STORAGE_CLASS: options.storageClass ?? "rekindle-sim" },
  });
  const dbPod = await pollUntil(
    async () => {
      const pods = await listPods(kc, namespace, STATEFULSET_NAME);
      // See stuck-pending.ts: a scheduler race can leave the pod unplaced after its claim binds.
      await recreateStuckPending(kc, namespace, pods);
      return pods.find(isPodReady);
    },
    { what: `StatefulSet ${namespace}/${STATEFULSET_NAME} pod Ready`, timeoutMs, ...signal },
  );
  await applyManifestFile(kc, fixturePath("workloads", "statefulset.yaml"), {
    labels,
    substitutions: { NAMESPACE: namespace },
  });
  const replicas = options.replicas ?? DEFAULT_DEPLOYMENT_REPLICAS;
  await applyManifestFile(kc, fixturePath("workloads", "deployment.yaml"), {
    labels,
    substitutions: { NAMESPACE: namespace, REPLICAS: String(replicas) },
  });
  await pollUntil(
    async () =>
      (await listPods(kc, namespace, DEPLOYMENT_NAME)).filter(isPodReady).length >= replicas
        ? true
        : undefined,
    { what: `Deployment ${namespace}/${DEPLOYMENT_NAME} ${replicas} pods Ready`, timeoutMs, ...signal },
  );
  await pollUntil(async () => (await listPods(kc, namespace, PLAIN_STATEFULSET_NAME)).find(isPodReady), {
    what: `StatefulSet ${namespace}/${PLAIN_STATEFULSET_NAME} pod Ready`,
    timeoutMs,
    ...signal,
  });
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const claim = await core.readNamespacedPersistentVolumeClaim({
    namespace,
    name: `data-${dbPod.metadata?.name ?? ""}`,
  });
  return { namespace, statefulSetNode: dbPod.spec?.nodeName ?? "", volumeName: claim.spec?.volumeName ?? "" };
}
