// The node-loss fixture workloads as data: each one's milestone id, app label and manifest file,
// their manifests parsed as deployNodeLossWorkloads applies them (for the workload model), and
// how many of each one's pods run on a node (the pods a fault on it takes).
import { readFileSync } from "node:fs";
import { parseManifests, substitute } from "../kube/apply.js";
import type { k8s } from "../kube/client.js";
import { deployPath } from "../util/project-files.js";
import {
  DEFAULT_DEPLOYMENT_REPLICAS,
  DEPLOYMENT_NAME,
  listPods,
  PLAIN_STATEFULSET_NAME,
  STATEFULSET_NAME,
} from "./deploy.js";

export interface NodeLossFixture {
  /** Milestone prefix ("<id>:recovered"). */
  id: string;
  /** The `app` label of its pods. */
  app: string;
  /** Its file in deploy/workloads/. */
  file: string;
}

/** The milestone id of the StatefulSet with a volume (the one that needs storage that can move). */
export const VOLUME_WORKLOAD_ID = "statefulset";

export const NODE_LOSS_FIXTURES: readonly NodeLossFixture[] = [
  { id: "deployment", app: DEPLOYMENT_NAME, file: "deployment.yaml" },
  { id: VOLUME_WORKLOAD_ID, app: STATEFULSET_NAME, file: "statefulset-pvc.yaml" },
  { id: "statefulset-plain", app: PLAIN_STATEFULSET_NAME, file: "statefulset.yaml" },
];

let parsed: { id: string; objects: k8s.KubernetesObject[] }[] | undefined;

/**
 * Each fixture's objects, its placeholders filled as deployNodeLossWorkloads fills them (the
 * Deployment's default replicas; the namespace and storage class do not matter to the model).
 */
export function nodeLossFixtureObjects(): readonly { id: string; objects: k8s.KubernetesObject[] }[] {
  parsed ??= NODE_LOSS_FIXTURES.map(({ id, file }) => {
    const path = deployPath("workloads", file);
    const text = substitute(readFileSync(path, "utf8"), {
      NAMESPACE: "rekindle",
      REPLICAS: String(DEFAULT_DEPLOYMENT_REPLICAS),
      STORAGE_CLASS: "rekindle-sim",
    });
    return { id, objects: parseManifests(text, path) };
  });
  return parsed;
}

/** How many pods of each fixture workload run on `node`, by id. */
export async function nodeLossPodsOn(
  kc: k8s.KubeConfig,
  namespace: string,
  node: string,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const { id, app } of NODE_LOSS_FIXTURES) {
    const pods = await listPods(kc, namespace, app);
    counts.set(id, pods.filter((p) => p.spec?.nodeName === node).length);
  }
  return counts;
}
