// The recovery controller as users deploy it, on any provider: deploy/controller/ applied
// unchanged, then what a user supplies beside it (the fence configuration as the rekindle-fencing
// ConfigMap, the Secrets it names, the CA ConfigMap), the Deployment restarted so both replicas read
// that configuration, and both awaited Ready. How the image reaches the nodes and what the fence
// driver talks to are the provider's (kind/in-cluster-controller.ts, existing/controller.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../errors.js";
import { applyManifests, deleteManifests, parseManifests, RUN_LABEL } from "../kube/apply.js";
import { isConflict, isNotFound, isPodReady, k8s } from "../kube/client.js";
import { imageTrouble, podTrouble } from "../kube/pod-trouble.js";
import { PROJECT_ROOT } from "../util/project-files.js";
import { silentProgress, type Progress } from "../util/progress.js";
import { pollUntil } from "../util/time.js";

export const CONTROLLER_NAMESPACE = "rekindle-system";
export const CONTROLLER_DEPLOYMENT = "rekindle-controller";
/** The Deployment's container (shipped-deployment.ts reads its args). */
const CONTROLLER_CONTAINER = "controller";
/** The objects' names the shipped deployment.yaml refers to (its comments tell users to make them). */
export const CONTROLLER_USER_OBJECTS = {
  fencing: "rekindle-fencing",
  credentials: "bmc-credentials",
  ca: "rekindle-bmc-ca",
} as const;
/** Where deployment.yaml mounts the CA ConfigMap's ca.crt. */
export const MOUNTED_CA_FILE = "/etc/rekindle/bmc-ca/ca.crt";
/**
 * The fixtures, in the order they are applied: the CRD, the namespace and the PriorityClass before
 * the Deployment. deploy/controller/kustomization.yaml lists the same files for users.
 */
export const CONTROLLER_FIXTURES = [
  "crd.yaml",
  "rbac.yaml",
  "priorityclass.yaml",
  "deployment.yaml",
  "service.yaml",
  "poddisruptionbudget.yaml",
] as const;

const FIXTURES_DIR = join(PROJECT_ROOT, "deploy", "controller");

/**
 * What remove() deletes by name before the namespace: every object of the fixtures but the CRD
 * (other controllers use it) and the Namespace, so the cluster-scoped ones (ClusterRole, binding,
 * PriorityClass) go too.
 */
export function fixtureObjectsToRemove(dir: string = FIXTURES_DIR): k8s.KubernetesObject[] {
  return CONTROLLER_FIXTURES.filter((file) => file !== "crd.yaml")
    .flatMap((file) => parseManifests(readFileSync(join(dir, file), "utf8"), file))
    .filter((object) => object.kind !== "Namespace");
}

export interface InClusterControllerTimeouts {
  /** Both replicas Ready after the restart. Default 180 s (image already in the nodes). */
  readyMs: number;
  /** Its namespace gone after remove() (the pods' grace period is 30 s). Default 90 s. */
  goneMs: number;
}

export const IN_CLUSTER_TIMEOUTS: InClusterControllerTimeouts = { readyMs: 180_000, goneMs: 90_000 };

/** A ConfigMap of the controller's namespace with one key. */
function controllerConfigMap(name: string, key: string, value: string): k8s.KubernetesObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: CONTROLLER_NAMESPACE },
    data: { [key]: value },
  } as k8s.KubernetesObject;
}

/** The ConfigMap holding the fence configuration (fence.yaml), as deployment.yaml mounts it. */
export function fencingConfigMap(fenceYaml: string): k8s.KubernetesObject {
  return controllerConfigMap(CONTROLLER_USER_OBJECTS.fencing, "fence.yaml", fenceYaml);
}

/** The CA ConfigMap deployment.yaml mounts at MOUNTED_CA_FILE. */
export function caConfigMap(caPem: string): k8s.KubernetesObject {
  return controllerConfigMap(CONTROLLER_USER_OBJECTS.ca, "ca.crt", caPem);
}

export async function readyControllerPods(kc: k8s.KubeConfig): Promise<{ name: string; node: string }[]> {
  const pods = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({
    namespace: CONTROLLER_NAMESPACE,
    labelSelector: `app.kubernetes.io/name=${CONTROLLER_DEPLOYMENT}`,
  });
  return pods.items
    .filter((pod) => pod.metadata?.deletionTimestamp === undefined && isPodReady(pod))
    .map((pod) => ({ name: pod.metadata?.name ?? "", node: pod.spec?.nodeName ?? "" }));
}

/**
 * Creates the controller's namespace labelled with this run, or refuses one that exists and is
 * not this run's: a controller the user installed there would be replaced by the fixtures.
 */
export async function claimControllerNamespace(kc: k8s.KubeConfig, runId: string): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  try {
    await core.createNamespace({
      body: { metadata: { name: CONTROLLER_NAMESPACE, labels: { [RUN_LABEL]: runId } } },
    });
  } catch (error) {
    if (!isConflict(error)) throw error;
    const existing = await core.readNamespace({ name: CONTROLLER_NAMESPACE });
    if (existing.metadata?.labels?.[RUN_LABEL] !== runId) {
      throw new RekindleError(
        "CONFLICT",
        `namespace ${CONTROLLER_NAMESPACE} already exists and is not this run's: deploying the fixtures there would replace what runs in it`,
        {
          hint: `a controller installed in this cluster? Run the in-cluster scenario on a cluster of its own, or delete namespace ${CONTROLLER_NAMESPACE}`,
        },
      );
    }
  }
}

/** Deletes the claimed namespace alone (nothing applied yet). */
export async function releaseControllerNamespace(kc: k8s.KubeConfig): Promise<void> {
  await deleteManifests(kc, [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: CONTROLLER_NAMESPACE } },
  ]);
}

export interface ControllerDeploymentOptions {
  kc: k8s.KubeConfig;
  /** Applied after the fixtures: the fencing ConfigMap, Secrets, the CA ConfigMap. */
  userObjects: readonly k8s.KubernetesObject[];
  /** The image the Deployment runs. Default: the one deployment.yaml names. */
  image?: string;
  /** Args after deployment.yaml's own (e.g. --node-selector). Default none. */
  extraArgs?: readonly string[];
  /** The provider's own undo (the kind power webhook's close), run last by remove(). */
  onRemove?: () => Promise<void>;
  timeouts?: Partial<InClusterControllerTimeouts>;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface AppliedController {
  readyPods: () => Promise<{ name: string; node: string }[]>;
  /**
   * Deletes what the fixtures made but the CRD, and the namespace with everything in it (the
   * Deployment, the user's objects, the leader Lease), waits until it is gone, then runs onRemove.
   * Idempotent.
   */
  remove: () => Promise<void>;
}

/** The Deployment of deployment.yaml with the image and args given; any other object as it is. */
function withContainer(
  object: k8s.KubernetesObject,
  options: Pick<ControllerDeploymentOptions, "image" | "extraArgs">,
): k8s.KubernetesObject {
  if (object.kind !== "Deployment" || object.metadata?.name !== CONTROLLER_DEPLOYMENT) return object;
  const deployment = structuredClone(object) as k8s.V1Deployment;
  const container = deployment.spec?.template.spec?.containers.find((c) => c.name === CONTROLLER_CONTAINER);
  if (container === undefined)
    throw new RekindleError("INTERNAL", `deployment.yaml has no container ${CONTROLLER_CONTAINER}`);
  if (options.image !== undefined) container.image = options.image;
  container.args = [...(container.args ?? []), ...(options.extraArgs ?? [])];
  return deployment;
}

/** The controller's pods, refused at once when their image cannot be had (retrying will not help). */
async function refuseImageTrouble(kc: k8s.KubeConfig, image: string): Promise<void> {
  const pods = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({
    namespace: CONTROLLER_NAMESPACE,
    labelSelector: `app.kubernetes.io/name=${CONTROLLER_DEPLOYMENT}`,
  });
  const trouble = pods.items.map(imageTrouble).filter((t) => t !== undefined);
  // Reported with the image the pods ask for: the one given, else deployment.yaml's.
  if (trouble.length > 0) {
    throw new RekindleError(
      "INVALID_INPUT",
      `the nodes cannot run the controller image ${image}: ${trouble.join("; ")}`,
      {
        hint: "load the image onto the nodes or push it where they pull from, and name it with --controller-image",
      },
    );
  }
}

async function waitReady(
  kc: k8s.KubeConfig,
  image: string,
  readyMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  try {
    await pollUntil(
      async () => {
        await refuseImageTrouble(kc, image);
        const deployment = await apps.readNamespacedDeployment({
          name: CONTROLLER_DEPLOYMENT,
          namespace: CONTROLLER_NAMESPACE,
        });
        const status = deployment.status;
        const settled =
          status?.updatedReplicas === 2 && status.readyReplicas === 2 && (status.replicas ?? 0) === 2;
        return settled ? true : undefined;
      },
      {
        what: `deployment ${CONTROLLER_NAMESPACE}/${CONTROLLER_DEPLOYMENT} to have 2 Ready replicas of the new configuration`,
        timeoutMs: readyMs,
        intervalMs: 1_000,
        ...(signal ? { signal } : {}),
      },
    );
  } catch (error) {
    if (!(error instanceof RekindleError) || error.code !== "TIMEOUT") throw error;
    const pods = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({
      namespace: CONTROLLER_NAMESPACE,
      labelSelector: `app.kubernetes.io/name=${CONTROLLER_DEPLOYMENT}`,
    });
    const troubled = pods.items.filter((pod) => !isPodReady(pod)).map(podTrouble);
    throw new RekindleError(
      "TIMEOUT",
      `${error.message}; not Ready: ${troubled.join("; ") || "none scheduled"}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Applies deploy/controller/ and the user's objects in the claimed namespace, restarts the
 * Deployment (with the image and args given), and resolves once both replicas are Ready. On
 * failure everything it made is removed (onRemove included) before it throws.
 */
export async function applyControllerDeployment(
  options: ControllerDeploymentOptions,
): Promise<AppliedController> {
  const progress = options.progress ?? silentProgress;
  const timeouts = { ...IN_CLUSTER_TIMEOUTS, ...options.timeouts };
  const { kc, signal } = options;
  const fixtures = FIXTURES_DIR;
  let removed = false;
  const remove = async (): Promise<void> => {
    if (removed) return;
    removed = true;
    try {
      // Everything the fixtures made but the CRD (which other controllers use), then the namespace
      // with the user's objects and the leader Lease (the controller does not release it when it
      // stops; the in-process controllers of later scenarios use the same one).
      await deleteManifests(kc, fixtureObjectsToRemove());
      await releaseControllerNamespace(kc);
      await pollUntil(
        async () => {
          try {
            await kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name: CONTROLLER_NAMESPACE });
            return undefined;
          } catch (error) {
            if (isNotFound(error)) return true;
            throw error;
          }
        },
        { what: `namespace ${CONTROLLER_NAMESPACE} gone`, timeoutMs: timeouts.goneMs, intervalMs: 500 },
      );
    } finally {
      await options.onRemove?.();
    }
  };
  try {
    // The image and args go in before the Deployment is applied: no pod ever runs another image.
    for (const file of CONTROLLER_FIXTURES)
      await applyManifests(
        kc,
        parseManifests(readFileSync(join(fixtures, file), "utf8"), file).map((o) =>
          withContainer(o, options),
        ),
      );
    // After deployment.yaml, whose rekindle-fencing ConfigMap is an example to be replaced.
    await applyManifests(kc, [...options.userObjects]);
    // The controller reads its configuration at start: restart the pods that may have read the example.
    await kc.makeApiClient(k8s.AppsV1Api).patchNamespacedDeployment(
      {
        name: CONTROLLER_DEPLOYMENT,
        namespace: CONTROLLER_NAMESPACE,
        body: {
          spec: {
            template: {
              metadata: { annotations: { "rekindle.dev/configured-at": new Date().toISOString() } },
            },
          },
        },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    const ready = progress.phase("waiting for both controller replicas to be Ready");
    await waitReady(kc, options.image ?? "of deployment.yaml", timeouts.readyMs, signal);
    ready.end("ready");
  } catch (error) {
    await remove().catch(() => undefined);
    throw error;
  }
  return { readyPods: () => readyControllerPods(kc), remove };
}
