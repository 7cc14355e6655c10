// Pods placed on one node for certain, whose replacements may still go anywhere: the node-pressure
// pods must all start on the pressured node (their eviction there is what the scenario judges), but
// a BestEffort replacement must start elsewhere once that node is tainted. A required node affinity
// or a nodeName would hold the replacements too; a preference alone lost one pod to another node on
// a fresh kind cluster. So, while they are placed, every other node holds a blocker pod that their
// required anti-affinity avoids (deploy/workloads/pressure-blockers.yaml); the blockers go before
// the fault, and IgnoredDuringExecution keeps the placed pods where they are.
import { isNotFound, k8s } from "../kube/client.js";
import { applyManifestFile } from "../kube/apply.js";
import { deployPath } from "../util/project-files.js";
import { pollUntil } from "../util/time.js";
import { listPods } from "./deploy.js";

const BLOCKER = "pressure-blocker";

export interface OneNodePlacement {
  kc: k8s.KubeConfig;
  namespace: string;
  /** The node the pods must land on. */
  node: string;
  /** Labels for the blockers' DaemonSet (the run label). */
  labels: Record<string, string>;
  /** How long the blockers may take to be bound, and to be gone. Default 120 s each. */
  timeoutMs?: number;
}

/** Every blocker pod bound to its node, one per node the DaemonSet wants; undefined while not. */
async function blockersBound(options: OneNodePlacement): Promise<true | undefined> {
  const { kc, namespace } = options;
  const set = await kc.makeApiClient(k8s.AppsV1Api).readNamespacedDaemonSet({ namespace, name: BLOCKER });
  const generation = set.metadata?.generation ?? 1;
  if ((set.status?.observedGeneration ?? 0) < generation) return undefined;
  const desired = set.status?.desiredNumberScheduled ?? 0;
  // A bound pod counts for anti-affinity whether or not its container runs yet.
  const bound = (await listPods(kc, namespace, BLOCKER)).filter(
    (p) => p.spec?.nodeName !== undefined && p.metadata?.deletionTimestamp === undefined,
  );
  return new Set(bound.map((p) => p.spec?.nodeName)).size >= desired ? true : undefined;
}

async function removeBlockers(options: OneNodePlacement, timeoutMs: number): Promise<void> {
  const { kc, namespace } = options;
  try {
    await kc.makeApiClient(k8s.AppsV1Api).deleteNamespacedDaemonSet({ namespace, name: BLOCKER });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  // A terminating blocker still repels a replacement: wait until none is left.
  await pollUntil(async () => ((await listPods(kc, namespace, BLOCKER)).length === 0 ? true : undefined), {
    what: `the ${BLOCKER} pods gone from ${namespace}`,
    timeoutMs,
  });
}

/**
 * Runs `place` (which deploys pods carrying the anti-affinity to the blockers and waits for them)
 * while every node but `node` holds a blocker, then removes the blockers, also when `place` failed.
 */
export async function placeOnOneNode<T>(options: OneNodePlacement, place: () => Promise<T>): Promise<T> {
  const { kc, namespace, node, labels } = options;
  const timeoutMs = options.timeoutMs ?? 120_000;
  await applyManifestFile(kc, deployPath("workloads", "pressure-blockers.yaml"), {
    labels,
    substitutions: { NAMESPACE: namespace, NODE: node },
  });
  let placed: T;
  try {
    await pollUntil(() => blockersBound(options), {
      what: `a ${BLOCKER} pod bound to every node but ${node}`,
      timeoutMs,
    });
    placed = await place();
  } catch (error) {
    // The placement's failure is the one to report; the scenario's namespace goes at its end anyway.
    await removeBlockers(options, timeoutMs).catch(() => undefined);
    throw error;
  }
  await removeBlockers(options, timeoutMs);
  return placed;
}
