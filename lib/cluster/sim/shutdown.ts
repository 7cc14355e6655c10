// Simulated graceful node shutdown: what the kubelet's shutdown manager does when systemd announces
// a shutdown. Ready=False "node is shutting down", then every active pod ends with reason
// Terminated, DaemonSet pods included (the kubelet makes no exception for them), in the kubelet's
// two groups: regular pods first, critical ones (priority >= system-cluster-critical, such as a
// system-node-critical kube-proxy or CNI agent) only after the regular group is done. Their volumes
// are unmounted (volumesInUse emptied), and the node goes silent. The node's kwok is stopped first,
// so nothing flips Ready back while the sim writes the kubelet's part. Simulated containers stop at
// once, so each group ends well within its share of shutdownGracePeriod (the critical pods'
// shutdownGracePeriodCriticalPods); the order is what the sim keeps.
import { isPodTerminal, type k8s } from "../../kube/client.js";
import { SYSTEM_CRITICAL_PRIORITY } from "../../kube/pod-kinds.js";
import { podsOnNode } from "../../kube/queries.js";
import { setNodeCondition, terminatePod } from "./kubelet-sim.js";
import { reportVolumesInUse } from "./volumes-in-use.js";

/**
 * The kubelet's shutdown groups without shutdownGracePeriodByPodPriority (its migrateConfig and
 * groupByPriority): priority below system-cluster-critical, then the rest. Pods that have ended
 * are in neither.
 */
export function shutdownGroups(pods: readonly k8s.V1Pod[]): [regular: k8s.V1Pod[], critical: k8s.V1Pod[]] {
  const active = pods.filter((p) => !isPodTerminal(p));
  const critical = (p: k8s.V1Pod) => (p.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
  return [active.filter((p) => !critical(p)), active.filter(critical)];
}

export const NODE_SHUTDOWN_MESSAGE = "node is shutting down";
export const SHUTDOWN_POD_MESSAGE = "Pod was terminated in response to imminent node shutdown.";

export async function simulateGracefulShutdown(
  kc: k8s.KubeConfig,
  nodeName: string,
  stopAgent: () => Promise<void>,
): Promise<{ terminated: string[] }> {
  await stopAgent();
  await setNodeCondition(kc, nodeName, {
    type: "Ready",
    status: "False",
    reason: "KubeletNotReady",
    message: NODE_SHUTDOWN_MESSAGE,
  });
  const terminated: string[] = [];
  // Two groups, as the kubelet does: regular pods, then critical ones once the first are done.
  for (const phase of shutdownGroups(await podsOnNode(kc, nodeName))) {
    await Promise.all(
      phase.map(async (pod) => {
        const namespace = pod.metadata?.namespace ?? "";
        const name = pod.metadata?.name ?? "";
        await terminatePod(kc, namespace, name, {
          reason: "Terminated",
          message: SHUTDOWN_POD_MESSAGE,
          disruptionReason: "TerminationByKubelet",
        });
        terminated.push(`${namespace}/${name}`);
      }),
    );
  }
  // The kubelet's shutdown manager waits for the volumes to unmount; its last status says so.
  await reportVolumesInUse(kc, [nodeName]);
  return { terminated };
}
