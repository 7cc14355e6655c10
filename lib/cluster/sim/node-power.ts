// A worker's power as the sim plays it, through its kwok process: SIGKILL is node loss, a fresh
// process is the node coming back, SIGSTOP/SIGCONT is a partition that heals.
import { RekindleError } from "../../errors.js";
import { isNotFound, k8s } from "../../kube/client.js";
import { untrackProcess } from "../../util/cleanup.js";
import { isDaemonRunning, signalDaemon } from "../../util/daemon.js";
import type { SimSession } from "./session.js";

/** Node loss: SIGKILL the node's kwok. Its Lease stops renewing; its pods are left as they are. */
export function stopSimNode(session: SimSession, nodeName: string): void {
  session.reload();
  const node = session.node(nodeName);
  if (node.process) {
    signalDaemon(node.process, "SIGKILL");
    untrackProcess(node.name);
  }
  node.process = undefined;
  node.power = "stopped";
  session.save();
  session.progress.info(`node ${nodeName}: stopped (kwok killed)`);
}

/**
 * The node comes back: a fresh kwok process. A real kubelet keeps its Lease identity across
 * restarts; kwok draws a new one, so the stale holder is cleared first to renew at once.
 */
export async function startSimNode(session: SimSession, nodeName: string): Promise<void> {
  session.reload();
  const node = session.node(nodeName);
  if (node.power === "partitioned") {
    healSimNode(session, nodeName);
    return;
  }
  if (node.process && isDaemonRunning(node.process)) return;
  await releaseLease(session, nodeName);
  node.process = session.spawn(node.kwok, node.name);
  node.power = "running";
  session.save();
  session.progress.info(`node ${nodeName}: started (kwok pid ${node.process.pid})`);
}

/** A partition that can heal: SIGSTOP freezes the node's kwok (no Lease renewals, no pod updates). */
export function partitionSimNode(session: SimSession, nodeName: string): void {
  session.reload();
  const node = session.node(nodeName);
  if (!node.process || !signalDaemon(node.process, "SIGSTOP")) {
    throw new RekindleError("CONFLICT", `node ${nodeName} cannot be partitioned: it is ${node.power}`, {
      hint: `start it first: rekindle sim node start ${nodeName}`,
    });
  }
  node.power = "partitioned";
  session.save();
  session.progress.info(`node ${nodeName}: partitioned (kwok stopped with SIGSTOP)`);
}

export function healSimNode(session: SimSession, nodeName: string): void {
  session.reload();
  const node = session.node(nodeName);
  if (node.power !== "partitioned" || !node.process) {
    throw new RekindleError("CONFLICT", `node ${nodeName} is not partitioned (it is ${node.power})`);
  }
  signalDaemon(node.process, "SIGCONT");
  node.power = "running";
  session.save();
  session.progress.info(`node ${nodeName}: healed (kwok continued)`);
}

async function releaseLease(session: SimSession, nodeName: string): Promise<void> {
  const coordination = session.kubeConfig().makeApiClient(k8s.CoordinationV1Api);
  try {
    await coordination.patchNamespacedLease(
      { name: nodeName, namespace: "kube-node-lease", body: { spec: { holderIdentity: null } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
