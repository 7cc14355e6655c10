// The recovery controller as users deploy it, on a kind cluster: the image built from the
// Dockerfile (offline, image/controller-image.ts) and loaded into the nodes, deploy/controller/
// applied unchanged, and then what a user supplies: the fence configuration, the Secret with the
// credentials and the CA ConfigMap. An in-cluster pod cannot reach the engine socket, so its fence
// driver is `webhook`, pointed at the kind power webhook (power-webhook/) on the kind network's
// gateway, which powers the node containers off and on.
import { stringify } from "yaml";
import { RekindleError } from "../../errors.js";
import { k8s } from "../../kube/client.js";
import { shippedControllerSettings } from "../../controller/shipped-deployment.js";
import { silentProgress, type Progress } from "../../util/progress.js";
import {
  applyControllerDeployment,
  caConfigMap,
  claimControllerNamespace,
  CONTROLLER_NAMESPACE,
  CONTROLLER_USER_OBJECTS,
  fencingConfigMap,
  MOUNTED_CA_FILE,
  releaseControllerNamespace,
  type InClusterControllerTimeouts,
} from "../in-cluster-controller.js";
import type { KindCli } from "./cli.js";
import { ensureControllerImage, type ControllerImageOptions } from "./image/controller-image.js";
import { DockerCli } from "./image/docker-cli.js";
import type { BmcLies } from "../bmc-lies.js";
import { startKindPowerWebhook, type KindPowerWebhook } from "./power-webhook/server.js";

export { CONTROLLER_FIXTURES, CONTROLLER_USER_OBJECTS, MOUNTED_CA_FILE } from "../in-cluster-controller.js";

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
  return [
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: CONTROLLER_USER_OBJECTS.credentials, namespace: CONTROLLER_NAMESPACE },
      // The webhook driver sends the Secret's "token" as a bearer token.
      stringData: { token: webhook.token },
    } as k8s.KubernetesObject,
    caConfigMap(webhook.caPem),
    fencingConfigMap(webhookFenceConfig(webhook.url)),
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
  /** What the power webhook's BMCs lie about (the cluster's bmc-lies). Default: none lies. */
  lies?: BmcLies;
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
      `built ${image.tag}, but deploy/controller/deployment.yaml runs ${wanted}`,
      {
        hint: "build the tag the manifest names (the image option's tag)",
      },
    );
  }
  return image.tag;
}

/**
 * Builds (or reuses) the controller image, loads it into the cluster, starts the power webhook,
 * applies deploy/controller/ and the user's objects, restarts the Deployment so both replicas
 * read that configuration, and resolves once both are Ready. On failure nothing is left running.
 */
export async function deployInClusterController(
  options: InClusterControllerOptions,
): Promise<InClusterController> {
  const progress = options.progress ?? silentProgress;
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
      ...(options.lies ? { lies: options.lies } : {}),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    // Nothing was applied yet: the namespace just claimed is all there is to take back.
    await releaseControllerNamespace(kc).catch(() => undefined);
    throw error;
  }
  let applied;
  try {
    applied = await applyControllerDeployment({
      kc,
      userObjects: userSuppliedObjects(webhook),
      onRemove: () => webhook.close(),
      progress,
      ...(options.timeouts ? { timeouts: options.timeouts } : {}),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (error instanceof RekindleError) throw error;
    throw new RekindleError(
      "COMMAND_FAILED",
      `deploying the controller in kind cluster ${options.cluster} failed`,
      {
        hint: `kubectl -n ${CONTROLLER_NAMESPACE} describe pods; kubectl -n ${CONTROLLER_NAMESPACE} logs deploy/rekindle-controller`,
        cause: error,
      },
    );
  }
  return {
    image,
    namespace: CONTROLLER_NAMESPACE,
    webhook,
    readyPods: applied.readyPods,
    remove: applied.remove,
    [Symbol.asyncDispose]: applied.remove,
  };
}
