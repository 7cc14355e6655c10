// The workloads a node-loss scenario watches: a Deployment, a StatefulSet without a volume and one
// with an RWO CSI volume, from deploy/workloads, in a namespace of their own labelled with the run id.
import { readFileSync } from "node:fs";
import { applyManifestFile, applyManifests, parseManifests, RUN_LABEL, substitute } from "../kube/apply.js";
import { RekindleError } from "../errors.js";
import { k8s, isConflict, isPodReady } from "../kube/client.js";
import { deployPath } from "../util/project-files.js";
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
  /** A pod of the namespace on every schedulable node first (deploy/workloads/presence.yaml). Default false. */
  presenceOnEveryNode?: boolean;
  /** Deployment replicas. Default DEFAULT_DEPLOYMENT_REPLICAS. */
  replicas?: number;
  /**
   * Nodes the StatefulSet pods should start on (a preferred node affinity, so a replacement may
   * still go anywhere): the nodes faults may hit on an existing cluster. A pod of it Ready on
   * another node fails the deployment, naming both. Default: anywhere.
   */
  preferNodes?: readonly string[];
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
    await applyManifestFile(kc, deployPath("workloads", "presence.yaml"), {
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
  const dbPath = deployPath("workloads", "statefulset-pvc.yaml");
  const dbText = substitute(readFileSync(dbPath, "utf8"), {
    NAMESPACE: namespace,
    STORAGE_CLASS: options.storageClass ?? "rekindle-sim",
  });
  const preferred = options.preferNodes;
  const dbObjects = parseManifests(dbText, dbPath).map((o) =>
    preferred !== undefined && o.kind === "StatefulSet" ? preferringNodes(o, preferred) : o,
  );
  await applyManifests(kc, dbObjects, { labels });
  const dbPod = await pollUntil(
    async () => {
      const pods = await listPods(kc, namespace, STATEFULSET_NAME);
      // See stuck-pending.ts: a scheduler race can leave the pod unplaced after its claim binds.
      await recreateStuckPending(kc, namespace, pods);
      return pods.find(isPodReady);
    },
    { what: `StatefulSet ${namespace}/${STATEFULSET_NAME} pod Ready`, timeoutMs, ...signal },
  );
  const dbNode = dbPod.spec?.nodeName ?? "";
  if (preferred !== undefined && !preferred.includes(dbNode))
    throw new RekindleError(
      "HARNESS_FAILED",
      `StatefulSet ${namespace}/${STATEFULSET_NAME}'s pod started on ${dbNode}, not on a node faults may hit (${preferred.join(", ")})`,
      {
        hint: `its node affinity prefers them; see why the scheduler chose ${dbNode} (kubectl -n ${namespace} describe pod ${dbPod.metadata?.name ?? ""})`,
      },
    );
  await applyManifestFile(kc, deployPath("workloads", "statefulset.yaml"), {
    labels,
    substitutions: { NAMESPACE: namespace },
  });
  const replicas = options.replicas ?? DEFAULT_DEPLOYMENT_REPLICAS;
  await applyManifestFile(kc, deployPath("workloads", "deployment.yaml"), {
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
  return { namespace, statefulSetNode: dbNode, volumeName: claim.spec?.volumeName ?? "" };
}

/** The StatefulSet with a preferred node affinity for `nodes` (its first placement; a replacement may go anywhere). */
function preferringNodes(object: k8s.KubernetesObject, nodes: readonly string[]): k8s.KubernetesObject {
  const set = object as k8s.V1StatefulSet;
  const template = set.spec?.template ?? {};
  const term: k8s.V1PreferredSchedulingTerm = {
    weight: 100,
    preference: { matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [...nodes] }] },
  };
  return {
    ...set,
    spec: {
      ...(set.spec as k8s.V1StatefulSetSpec),
      template: {
        ...template,
        spec: {
          ...(template.spec as k8s.V1PodSpec),
          affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [term] } },
        },
      },
    },
  } as k8s.KubernetesObject;
}
