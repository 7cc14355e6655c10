// Node re-registration: the machine is reinstalled, or its kubelet re-registers after its Node
// object was deleted, and the same name comes back as a new object with a new UID. The sim stops
// the node's kwok (the machine goes away), deletes the Node, creates it again as boot did, and
// starts a fresh kwok. What happens to what the old Node had:
//
// - Its Lease is owned by the old Node's UID, so the garbage collector would delete it, possibly
//   after the new kwok had started renewing it (and the new node would lose its Lease once). The
//   sim deletes it with the Node instead; the new kwok creates a new one owned by the new Node.
// - Its pods are left to Kubernetes: deleting a Node unbinds nothing, PodGC force-deletes pods
//   of a missing node only after 40 s, and re-registration takes about a second, so workload pods
//   stay bound by name and the new kwok adopts them as they are, as a kubelet registering under
//   the same name does with the pods bound to it. The DaemonSet controller may delete its pods
//   from a node it saw missing; it recreates them on the new Node.
// - Taints, labels and annotations anyone added to the old Node are gone; the new one has what
//   a fresh worker registers with (boot/worker-nodes.ts), plus whatever the node lifecycle controller
//   adds while it is not yet Ready.
// - A clock skew stays: it belongs to the machine (the webhook matches the node's name).
import { RekindleError } from "../../../errors.js";
import { isNotFound, k8s } from "../../../kube/client.js";
import { pollUntil } from "../../../util/time.js";
import { startSimNode, stopSimNode } from "../kubelet/node-power.js";
import type { SimSession } from "../boot/session.js";
import { workerNodeObject } from "../boot/worker-nodes.js";

/** Deleting a Node (no finalizers) takes effect at once; this only bounds a stuck apiserver. */
const NODE_GONE_TIMEOUT_MS = 30_000;

export interface Reregistration {
  node: string;
  oldUid: string;
  newUid: string;
}

/** Re-registers `nodeName` under a new UID; resolves once its new kwok runs (not necessarily Ready yet). */
export async function reregisterSimNode(
  session: SimSession,
  nodeName: string,
  signal?: AbortSignal,
): Promise<Reregistration> {
  session.reload();
  const node = session.node(nodeName);
  const index = node.index ?? session.state.nodes.indexOf(node);
  const core = session.kubeConfig().makeApiClient(k8s.CoreV1Api);
  const coordination = session.kubeConfig().makeApiClient(k8s.CoordinationV1Api);
  const oldUid = (await core.readNode({ name: nodeName })).metadata?.uid ?? "";
  if (node.power !== "stopped") await stopSimNode(session, nodeName);
  await core.deleteNode({ name: nodeName });
  await pollUntil(
    async () => {
      try {
        await core.readNode({ name: nodeName });
        return undefined;
      } catch (error) {
        if (isNotFound(error)) return true;
        throw error;
      }
    },
    { what: `Node ${nodeName} deleted`, timeoutMs: NODE_GONE_TIMEOUT_MS, ...(signal ? { signal } : {}) },
  );
  try {
    await coordination.deleteNamespacedLease({ name: nodeName, namespace: "kube-node-lease" });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  const created = await core.createNode({
    // A fleet node registers with its group label, as at boot: its shared kwok plays it at once,
    // as a fresh kwok of its own would.
    body: workerNodeObject(nodeName, { zone: node.zone, index, group: node.group }, session.state.runId),
  });
  const newUid = created.metadata?.uid ?? "";
  if (newUid === "" || newUid === oldUid) {
    throw new RekindleError("INTERNAL", `Node ${nodeName} came back with UID "${newUid}" (was "${oldUid}")`);
  }
  await startSimNode(session, nodeName);
  session.progress.info(`node ${nodeName}: re-registered (UID ${oldUid} → ${newUid})`);
  return { node: nodeName, oldUid, newUid };
}
