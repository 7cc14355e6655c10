// The node agents of a sim cluster (deploy/sim/daemonsets.yaml): DaemonSets in kube-system, as
// every real cluster runs (kube-proxy, a CNI agent, a log shipper), so that suites and the recovery
// controller meet pods that belong to their node and tolerate its loss. The cluster counts as up
// once each has a Ready pod on every worker whose kwok runs.
import { applyManifestFile, RUN_LABEL } from "../../../kube/apply.js";
import { isPodReady, k8s } from "../../../kube/client.js";
import { deployPath } from "../../../util/project-files.js";
import { pollUntil } from "../../../util/time.js";

export const SIM_DAEMONSET_NAMESPACE = "kube-system";
/** Tolerates every taint and is system-node-critical (kube-proxy, CNI agents). */
export const NODE_PROXY_DAEMONSET = "rekindle-node-proxy";
/** Default tolerations, priority 0 (log shippers, node exporters). */
export const LOG_AGENT_DAEMONSET = "rekindle-log-agent";
export const SIM_DAEMONSETS = [NODE_PROXY_DAEMONSET, LOG_AGENT_DAEMONSET] as const;

export async function applySimDaemonSets(
  kc: k8s.KubeConfig,
  runId: string,
  kubernetesVersion: string,
): Promise<void> {
  await applyManifestFile(kc, deployPath("sim", "daemonsets.yaml"), {
    labels: { [RUN_LABEL]: runId },
    substitutions: { KUBELET_VERSION: kubernetesVersion },
  });
}

/** Names of the nodes a DaemonSet's pods run Ready on (pods being deleted aside). */
export function nodesWithReadyPod(pods: readonly k8s.V1Pod[]): Set<string> {
  return new Set(
    pods.filter((p) => !p.metadata?.deletionTimestamp && isPodReady(p)).map((p) => p.spec?.nodeName ?? ""),
  );
}

/** Waits until every sim DaemonSet has a Ready pod on each of `nodes`. */
export async function waitForSimDaemonSets(
  kc: k8s.KubeConfig,
  nodes: readonly string[],
  /** intervalMs: how often the pods are listed (default 500 ms). */
  options: { timeoutMs: number; intervalMs?: number; signal?: AbortSignal | undefined },
): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await pollUntil(
    async () => {
      for (const name of SIM_DAEMONSETS) {
        const pods = await core.listNamespacedPod({
          namespace: SIM_DAEMONSET_NAMESPACE,
          labelSelector: `app=${name}`,
        });
        const ready = nodesWithReadyPod(pods.items);
        if (!nodes.every((n) => ready.has(n))) return undefined;
      }
      return true;
    },
    {
      what: `DaemonSets ${SIM_DAEMONSETS.join(", ")} Ready on ${namesForMessage(nodes)}`,
      timeoutMs: options.timeoutMs,
      intervalMs: options.intervalMs ?? 500,
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
}

/** Node names for a message: all of a few, the first ten and a count of many. */
export function namesForMessage(names: readonly string[]): string {
  return names.length <= 10
    ? names.join(", ")
    : `${names.slice(0, 10).join(", ")} and ${names.length - 10} more`;
}
