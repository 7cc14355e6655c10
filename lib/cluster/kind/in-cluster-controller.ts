// The recovery controller as users deploy it, on a kind cluster: the image built from the
// Dockerfile (offline, image/controller-image.ts) and loaded into the nodes, fixtures/controller/
// applied unchanged, and then what a user supplies: the fence configuration, the Secret with the
// credentials and the CA ConfigMap. An in-cluster pod cannot reach the engine socket, so its fence
// driver is `webhook`, pointed at the kind power webhook (power-webhook/) on the kind network's
// gateway, which powers the node containers off and on.
import { join } from "node:path";
import { stringify } from "yaml";
import { RekindleError } from "../../errors.js";
import { applyManifestFile, applyManifests } from "../../kube/apply.js";
import { DEFAULT_LEADER_LEASE } from "../../controller/leader.js";
import { shippedControllerSettings } from "../../controller/shipped-deployment.js";
import { isNotFound, k8s } from "../../kube/client.js";
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
  /** Its pods gone after the Deployment's deletion (their grace period is 30 s). Default 60 s. */
  goneMs: number;
}

export const IN_CLUSTER_TIMEOUTS: InClusterControllerTimeouts = { readyMs: 180_000, goneMs: 60_000 };

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
  /** Deletes the Deployment (its pods stop fencing) and closes the power webhook. Idempotent. */
  remove(): Promise<void>;
}

async function controllerPods(kc: k8s.KubeConfig): Promise<k8s.V1Pod[]> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const pods = await core.listNamespacedPod({
    namespace: CONTROLLER_NAMESPACE,
    labelSelector: `app.kubernetes.io/name=${CONTROLLER_DEPLOYMENT}`,
  });
  return pods.items;
}

async function readyControllerPods(kc: k8s.KubeConfig): Promise<{ name: string; node: string }[]> {
  return (await controllerPods(kc))
    .filter(
      (pod) =>
        pod.metadata?.deletionTimestamp === undefined &&
        pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    )
    .map((pod) => ({ name: pod.metadata?.name ?? "", node: pod.spec?.nodeName ?? "" }));
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
  const image = await controllerImage(options, progress);
  const load = progress.phase(`loading ${image} into kind cluster ${options.cluster}`);
  await options.cli.loadImage(options.cluster, image, signal);
  load.end("loaded");
  const webhook = await startKindPowerWebhook({
    cluster: options.cluster,
    progress,
    ...(signal ? { signal } : {}),
  });
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  let removed = false;
  const remove = async (): Promise<void> => {
    if (removed) return;
    removed = true;
    try {
      try {
        await apps.deleteNamespacedDeployment({
          name: CONTROLLER_DEPLOYMENT,
          namespace: CONTROLLER_NAMESPACE,
        });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      // The controller does not release its leader Lease when it stops: once its pods are gone the
      // Lease goes too, or controllers started next (the in-process ones of later scenarios use the
      // same Lease) would wait for it to expire.
      await pollUntil(async () => ((await controllerPods(kc)).length === 0 ? true : undefined), {
        what: `the controller pods in ${CONTROLLER_NAMESPACE} gone`,
        timeoutMs: timeouts.goneMs,
        intervalMs: 500,
      });
      await kc
        .makeApiClient(k8s.CoordinationV1Api)
        .deleteNamespacedLease({ name: DEFAULT_LEADER_LEASE, namespace: CONTROLLER_NAMESPACE })
        .catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
    } finally {
      await webhook.close();
    }
  };
  try {
    const fixtures = join(PROJECT_ROOT, "fixtures", "controller");
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
