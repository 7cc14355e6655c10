// Simulated graceful node shutdown: what the kubelet's shutdown manager does when systemd announces
// a shutdown. Ready=False "node is shutting down", regular pods then critical ones (priority >=
// 2000000000) end with reason Terminated, their volumes are unmounted (volumesInUse emptied), and
// the node goes silent. The node's kwok is stopped
// first, so nothing flips Ready back while the sim writes the kubelet's part.
import { isPodTerminal, type k8s } from "../../kube/client.js";
import { podsOnNode } from "../../kube/queries.js";
import { setNodeCondition, terminatePod } from "./kubelet-sim.js";
import { reportVolumesInUse } from "./volumes-in-use.js";

/** Priority from which the kubelet treats a pod as critical (system-cluster-critical and up). */
const CRITICAL_PRIORITY = 2_000_000_000;
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
  const live = (await podsOnNode(kc, nodeName)).filter((p) => !isPodTerminal(p));
  const critical = (p: k8s.V1Pod) => (p.spec?.priority ?? 0) >= CRITICAL_PRIORITY;
  const terminated: string[] = [];
  // Two phases, as the kubelet does: regular pods, then critical ones.
  for (const phase of [live.filter((p) => !critical(p)), live.filter(critical)]) {
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
