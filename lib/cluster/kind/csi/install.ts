// Installs kind's attaching CSI driver into a running cluster (notes/csi-attach.md): builds the
// binaries and the image (cached), loads the image into the nodes, takes the default annotation
// off the other StorageClasses, applies deploy/csi/deploy.yaml and waits until the attacher is
// ready and every worker's kubelet has registered the driver (its CSINode lists it). The volumes
// themselves are provisioned by startCsiProvisioner, in the rekindle process.
import { join } from "node:path";
import { applyManifestFile } from "../../../kube/apply.js";
import { k8s } from "../../../kube/client.js";
import { startProvisioner } from "../../../kube/csi-provisioner.js";
import { deployPath } from "../../../util/project-files.js";
import { cacheRoot } from "../../../util/paths.js";
import type { Progress } from "../../../util/progress.js";
import { pollUntil } from "../../../util/time.js";
import type { KindCli } from "../cli.js";
import { DockerCli } from "../image/docker-cli.js";
import { SHARED_NODE_DIR } from "../shared-storage.js";
import { ensureCsiBinaries } from "./build.js";
import { ensureCsiImage } from "./image.js";

import { CSI_DRIVER, CSI_NAMESPACE, CSI_STORAGE_CLASS } from "./names.js";

export { CSI_DRIVER, CSI_NAMESPACE, CSI_STORAGE_CLASS } from "./names.js";
const DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class";

export const CSI_TIMEOUTS = {
  /** The controller Deployment available and every worker's CSINode listing the driver. */
  readyMs: 180_000,
} as const;

export interface InstallCsiOptions {
  kc: k8s.KubeConfig;
  cli: KindCli;
  cluster: string;
  /** The worker node names: each must register the driver. */
  workers: readonly string[];
  /** Default cacheRoot(). */
  cacheDir?: string;
  /** Default: a DockerCli on DOCKER_HOST's engine. */
  docker?: DockerCli;
  progress: Progress;
  signal?: AbortSignal;
}

/** Substitutions for deploy/csi/deploy.yaml. */
export function deploySubstitutions(image: string): Record<string, string> {
  return { IMAGE: image, CSI_DRIVER, SHARED_DIR: SHARED_NODE_DIR };
}

/** Removes the default annotation from every class but ours (kind's `standard`): one default only. */
async function undefaultOthers(kc: k8s.KubeConfig): Promise<void> {
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  for (const sc of (await storage.listStorageClass()).items) {
    const name = sc.metadata?.name ?? "";
    if (name === CSI_STORAGE_CLASS || sc.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] !== "true")
      continue;
    await storage.patchStorageClass(
      { name, body: { metadata: { annotations: { [DEFAULT_CLASS_ANNOTATION]: "false" } } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  }
}

/** Workers whose CSINode does not list the driver yet. */
export function unregistered(csiNodes: readonly k8s.V1CSINode[], workers: readonly string[]): string[] {
  const registered = new Set(
    csiNodes
      // The client's type says always a list; the API server sends null for a node with none.
      .filter((n) =>
        ((n.spec.drivers as k8s.V1CSINodeDriver[] | null) ?? []).some((d) => d.name === CSI_DRIVER),
      )
      .map((n) => n.metadata?.name ?? ""),
  );
  return workers.filter((w) => !registered.has(w));
}

/**
 * Waits until each node's kubelet lists the driver in its CSINode again. A restarted node's kubelet
 * registers it only once the node plugin's socket is back; a pod with a volume placed on it before
 * that fails to attach ("CSINode … does not contain driver").
 */
export async function awaitCsiRegistered(
  kc: k8s.KubeConfig,
  nodes: readonly string[],
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<void> {
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  await pollUntil(
    async () => (unregistered((await storage.listCSINode()).items, nodes).length === 0 ? true : undefined),
    {
      what: `the kubelet of ${nodes.join(", ")} to register the CSI driver ${CSI_DRIVER} again`,
      timeoutMs: options.timeoutMs ?? CSI_TIMEOUTS.readyMs,
      intervalMs: 500,
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
}

export async function installCsiDriver(options: InstallCsiOptions): Promise<{ image: string }> {
  const { kc, progress, signal } = options;
  const cacheDir = options.cacheDir ?? cacheRoot();
  const binaries = await ensureCsiBinaries({ cacheDir, progress, ...(signal ? { signal } : {}) });
  const docker = options.docker ?? new DockerCli(signal ? { signal } : {});
  const image = await ensureCsiImage(docker, binaries, join(cacheDir, "kind", "work"));
  const load = progress.phase(`loading ${image} into kind cluster ${options.cluster}`);
  await options.cli.loadImage(options.cluster, image, signal);
  load.end("loaded");
  await undefaultOthers(kc);
  await applyManifestFile(kc, deployPath("csi", "deploy.yaml"), {
    substitutions: deploySubstitutions(image),
  });
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  const wait = progress.phase("waiting for the CSI attacher and every worker's registration");
  await pollUntil(
    async () => {
      const deployment = await apps.readNamespacedDeployment({
        name: "csi-controller",
        namespace: CSI_NAMESPACE,
      });
      if ((deployment.status?.availableReplicas ?? 0) < 1) return undefined;
      const missing = unregistered((await storage.listCSINode()).items, options.workers);
      return missing.length === 0 ? true : undefined;
    },
    {
      what: `the CSI driver ${CSI_DRIVER} (csi-controller available, CSINode of ${options.workers.join(", ")})`,
      timeoutMs: CSI_TIMEOUTS.readyMs,
      intervalMs: 1_000,
      ...(signal ? { signal } : {}),
    },
  );
  wait.end("ready");
  return { image };
}

/** Provisions rekindle-csi's volumes (CSI PVs, volume handle pvc-<claim uid>) until stop(). */
export function startCsiProvisioner(
  kc: k8s.KubeConfig,
  log: (message: string) => void = () => undefined,
): { stop(): Promise<void> } {
  return startProvisioner(kc, {
    driver: CSI_DRIVER,
    volumeSource: (claim) => ({
      csi: { driver: CSI_DRIVER, volumeHandle: `pvc-${claim.metadata?.uid ?? ""}` },
    }),
    // The kubelet waits for the attachment itself: nothing to play here.
    intervalMs: 1_000,
    log,
  });
}
