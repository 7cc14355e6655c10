// The recovery controller as users deploy it, on a kind cluster: the image built from the
// Dockerfile (offline, image/controller-image.ts) and loaded into the nodes, fixtures/controller/
// applied unchanged, and then what a user supplies: the fence configuration, the Secret with the
// credentials and the CA ConfigMap. An in-cluster pod cannot reach the engine socket, so its fence
// driver is `webhook`, pointed at the kind power webhook (power-webhook/) on the kind network's
// gateway, which powers the node containers off and on.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { RekindleError } from "../../errors.js";
import {
  applyManifestFile,
  applyManifests,
  deleteManifests,
  parseManifests,
  RUN_LABEL,
} from "../../kube/apply.js";
import { shippedControllerSettings } from "../../controller/shipped-deployment.js";
import { isConflict, isNotFound, k8s } from "../../kube/client.js";
import { PROJECT_ROOT } from "../../util/fixtures.js";
import { silentProgress, type Progress } from "../../util/progress.js";
import { pollUntil } from "../../util/time.js";
import type { KindCli } from "./cli.js";
import { ensureControllerImage, type ControllerImageOptions } from "./image/controller-image.js";
import { DockerCli } from "./image/docker-cli.js";
import { startKindPowerWebhook, type KindPowerWebhook } from "./power-webhook/server.js";

export const CONTROLLER_NAMESPACE = "rekindle-system";
export const CONTROLLER_DEPLOYMENT = "rekindle-controller";
/** The objects' names the shipped deployment.yaml refers to (its comments tell users to make them). */
export const CONTROLLER_USER_OBJECTS = {
  fencing: "rekindle-fencing",
  credentials: "bmc-credentials",
  ca: "rekindle-bmc-ca",
} as const;
/** Where deployment.yaml mounts the CA ConfigMap's ca.crt. */
export const MOUNTED_CA_FILE = "/etc/rekindle/bmc-ca/ca.crt";
/** The fixtures, in the order they are applied (the CRD and the namespace before the Deployment). */
export const CONTROLLER_FIXTURES = ["crd.yaml", "rbac.yaml", "deployment.yaml"] as const;

export interface InClusterControllerTimeouts {
  /** Both replicas Ready after the restart. Default 180 s (image already in the nodes). */
  readyMs: number;
  /** Its namespace gone after remove() (the pods' grace period is 30 s). Default 90 s. */
  goneMs: number;
}

export const IN_CLUSTER_TIMEOUTS: InClusterControllerTimeouts = { readyMs: 180_000, goneMs: 90_000 };

/** The fence configuration a user of a kind cluster writes: every node through the power webhook. */
export function webhookFenceConfig(url: string, caFile: string = MOUNTED_CA_FILE): string {
  return stringify({
    templates: {
      "kind-power": {
        driver: "webhook",
        options: { url, caFile },
        secretRef: { name: CONTROLLER_USER_OBJECTS.credentials },
      },
    },
    defaultTemplate: "kind-power",
  });
}

/** The Secret and ConfigMaps a user supplies beside the fixtures (their names are the fixtures'). */
export function userSuppliedObjects(webhook: {
  url: string;
  caPem: string;
  token: string;
}): k8s.KubernetesObject[] {
  const meta = (name: string) => ({ name, namespace: CONTROLLER_NAMESPACE });
  return [
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: meta(CONTROLLER_USER_OBJECTS.credentials),
      // The webhook driver sends the Secret's "token" as a bearer token.
      stringData: { token: webhook.token },
    } as k8s.KubernetesObject,
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: meta(CONTROLLER_USER_OBJECTS.ca),
      data: { "ca.crt": webhook.caPem },
    } as k8s.KubernetesObject,
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: meta(CONTROLLER_USER_OBJECTS.fencing),
      data: { "fence.yaml": webhookFenceConfig(webhook.url) },
    } as k8s.KubernetesObject,
  ];
}

export interface InClusterControllerOptions {
  /** The kind cluster's name (kind load, and the webhook's node containers). */
  cluster: string;
  /** The run's id: the controller's namespace carries it (and is refused when it carries another). */
  runId: string;
  kc: k8s.KubeConfig;
  cli: KindCli;
  /** Passed to ensureControllerImage. */
  image?: Omit<ControllerImageOptions, "progress" | "signal">;
  /** Default $REKINDLE_CONTROLLER_IMAGE, else "build". */
  imageSource?: ControllerImageSource;
  timeouts?: Partial<InClusterControllerTimeouts>;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface InClusterController extends AsyncDisposable {
  readonly image: string;
  readonly namespace: string;
  readonly webhook: KindPowerWebhook;
  /** The controller's pods that are Ready now, with their nodes. */
  readyPods(): Promise<{ name: string; node: string }[]>;
  /**
   * Deletes what the fixtures made but the CRD, and the namespace with everything in it (the
   * Deployment, the user's objects, the leader Lease), waits until it is gone, and closes the power
   * webhook. Idempotent.
   */
  remove(): Promise<void>;
}

async function readyControllerPods(kc: k8s.KubeConfig): Promise<{ name: string; node: string }[]> {
  const pods = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({
    namespace: CONTROLLER_NAMESPACE,
    labelSelector: `app.kubernetes.io/name=${CONTROLLER_DEPLOYMENT}`,
  });
  return pods.items
    .filter(
      (pod) =>
        pod.metadata?.deletionTimestamp === undefined &&
        pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    )
    .map((pod) => ({ name: pod.metadata?.name ?? "", node: pod.spec?.nodeName ?? "" }));
}

/**
 * Creates the controller's namespace labelled with this run, or refuses one that exists and is
 * not this run's: a controller the user installed there would be replaced by the fixtures.
 */
async function claimControllerNamespace(kc: k8s.KubeConfig, runId: string): Promise<void> {
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

/** How the controller image is had: built here offline (default), or the engine's own as it is. */
export const CONTROLLER_IMAGE_SOURCES = ["build", "engine"] as const;
export type ControllerImageSource = (typeof CONTROLLER_IMAGE_SOURCES)[number];

/** $REKINDLE_CONTROLLER_IMAGE, checked; default "build". */
export function controllerImageSource(env: NodeJS.ProcessEnv = process.env): ControllerImageSource {
  const value = env["REKINDLE_CONTROLLER_IMAGE"] ?? "build";
  if (!(CONTROLLER_IMAGE_SOURCES as readonly string[]).includes(value)) {
    throw RekindleError.invalidInput("REKINDLE_CONTROLLER_IMAGE", value, CONTROLLER_IMAGE_SOURCES);
  }
  return value as ControllerImageSource;
}

/**
 * The image the shipped Deployment runs, in the engine: built here (ensureControllerImage), or with
 * source "engine" the one a `docker build -t <that tag> .` left there, used as it is.
 */
async function controllerImage(options: InClusterControllerOptions, progress: Progress): Promise<string> {
  const wanted = shippedControllerSettings().image;
  const signal = options.signal;
  if ((options.imageSource ?? controllerImageSource()) === "engine") {
    const docker = new DockerCli(signal ? { signal } : {});
    if ((await docker.imageId(wanted)) === undefined) {
      throw new RekindleError(
        "PRECONDITION",
        `the container engine has no image ${wanted} (REKINDLE_CONTROLLER_IMAGE=engine)`,
        {
          hint: `docker build -t ${wanted} . in the repository, or unset REKINDLE_CONTROLLER_IMAGE to have rekindle build it offline`,
        },
      );
    }
    progress.info(`controller image ${wanted}: the engine's own (REKINDLE_CONTROLLER_IMAGE=engine)`);
    return wanted;
  }
  const image = await ensureControllerImage({ ...options.image, progress, ...(signal ? { signal } : {}) });
  if (image.tag !== wanted) {
    throw new RekindleError(
      "PRECONDITION",
      `built ${image.tag}, but fixtures/controller/deployment.yaml runs ${wanted}`,
      {
        hint: "build the tag the manifest names (the image option's tag)",
      },
    );
  }
  return image.tag;
}

/**
 * Builds (or reuses) the controller image, loads it into the cluster, starts the power webhook,
 * applies fixtures/controller/ and the user's objects, restarts the Deployment so both replicas
 * read that configuration, and resolves once both are Ready. On failure nothing is left running.
 */
export async function deployInClusterController(
  options: InClusterControllerOptions,
): Promise<InClusterController> {
  const progress = options.progress ?? silentProgress;
  const timeouts = { ...IN_CLUSTER_TIMEOUTS, ...options.timeouts };
  const { kc, signal } = options;
  await claimControllerNamespace(kc, options.runId);
  let image: string;
  let webhook: KindPowerWebhook;
  try {
    image = await controllerImage(options, progress);
    const load = progress.phase(`loading ${image} into kind cluster ${options.cluster}`);
    await options.cli.loadImage(options.cluster, image, signal);
    load.end("loaded");
    webhook = await startKindPowerWebhook({
      cluster: options.cluster,
      progress,
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    // Nothing was applied yet: the namespace just claimed is all there is to take back.
    await deleteManifests(kc, [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: CONTROLLER_NAMESPACE } },
    ]).catch(() => undefined);
    throw error;
  }
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const fixtures = join(PROJECT_ROOT, "fixtures", "controller");
  let removed = false;
  const remove = async (): Promise<void> => {
    if (removed) return;
    removed = true;
    try {
      // Everything the fixtures made but the CRD (which other controllers use), then the namespace
      // with the user's objects and the leader Lease (the controller does not release it when it
      // stops; the in-process controllers of later scenarios use the same one).
      const made = CONTROLLER_FIXTURES.filter((file) => file !== "crd.yaml").flatMap((file) =>
        parseManifests(readFileSync(join(fixtures, file), "utf8"), file),
      );
      await deleteManifests(
        kc,
        made.filter((object) => object.kind !== "Namespace"),
      );
      await deleteManifests(kc, [
        { apiVersion: "v1", kind: "Namespace", metadata: { name: CONTROLLER_NAMESPACE } },
      ]);
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
      await webhook.close();
    }
  };
  try {
    for (const file of CONTROLLER_FIXTURES) await applyManifestFile(kc, join(fixtures, file));
    // After deployment.yaml, whose rekindle-fencing ConfigMap is an example to be replaced.
    await applyManifests(kc, userSuppliedObjects(webhook));
    // The controller reads its configuration at start: restart the pods that may have read the example.
    await apps.patchNamespacedDeployment(
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
    await pollUntil(
      async () => {
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
        timeoutMs: timeouts.readyMs,
        intervalMs: 1_000,
        ...(signal ? { signal } : {}),
      },
    );
    ready.end("ready");
  } catch (error) {
    await remove().catch(() => undefined);
    if (error instanceof RekindleError) throw error;
    throw new RekindleError(
      "COMMAND_FAILED",
      `deploying the controller in kind cluster ${options.cluster} failed`,
      {
        hint: `kubectl -n ${CONTROLLER_NAMESPACE} describe pods; kubectl -n ${CONTROLLER_NAMESPACE} logs deploy/${CONTROLLER_DEPLOYMENT}`,
        cause: error,
      },
    );
  }
  return {
    image,
    namespace: CONTROLLER_NAMESPACE,
    webhook,
    readyPods: () => readyControllerPods(kc),
    remove,
    [Symbol.asyncDispose]: remove,
  };
}
