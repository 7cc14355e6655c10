// A worker's power as the sim plays it. A node with its own kwok: SIGKILL is node loss, a fresh
// process is the node coming back, SIGSTOP/SIGCONT is a partition that heals. A fleet node in a
// shared kwok (kwok-groups.ts): its group label taken away is loss or partition (the kwok stops
// renewing its Lease and leaves its pods as they are), the label put back returns it.
import { RekindleError } from "../../errors.js";
import { isNotFound, k8s } from "../../kube/client.js";
import { untrackProcess } from "../../util/cleanup.js";
import { isDaemonRunning, signalDaemon } from "../../util/daemon.js";
import { SIM_KWOK_GROUP_LABEL } from "./kwok-groups.js";
import type { SimSession } from "./session.js";
import type { SimNodeState } from "./state.js";

/** Node loss: SIGKILL the node's kwok, or release it from its shared kwok. Its Lease stops renewing. */
export async function stopSimNode(session: SimSession, nodeName: string): Promise<void> {
  session.reload();
  const node = session.node(nodeName);
  if (node.group !== undefined) {
    if (node.power === "running") await setGroupLabel(session, node, null);
  } else if (node.process) {
    signalDaemon(node.process, "SIGKILL");
    untrackProcess(node.name);
  }
  session.commitNode(nodeName, (n) => {
    n.process = undefined;
    n.power = "stopped";
  });
  session.progress.info(
    `node ${nodeName}: stopped (${node.group === undefined ? "kwok killed" : `released from kwok ${node.group}`})`,
  );
}

/**
 * The node comes back: a fresh kwok process, or its shared kwok's label again. A real kubelet
 * keeps its Lease identity across restarts; a fresh kwok draws a new one, so the stale holder is
 * cleared first to renew at once (a shared kwok never let go of its identity).
 */
export async function startSimNode(session: SimSession, nodeName: string): Promise<void> {
  session.reload();
  const node = session.node(nodeName);
  if (node.power === "partitioned") {
    await healSimNode(session, nodeName);
    return;
  }
  if (node.group !== undefined) {
    if (node.power === "running") return;
    await setGroupLabel(session, node, node.group);
    session.commitNode(nodeName, (n) => {
      n.power = "running";
    });
    session.progress.info(`node ${nodeName}: started (kwok ${node.group} plays it again)`);
    return;
  }
  if (node.process && isDaemonRunning(node.process)) return;
  const kwok = node.kwok;
  if (!kwok) throw new RekindleError("INTERNAL", `node ${nodeName} has neither its own kwok nor a group`);
  await releaseLease(session, nodeName);
  const kwokProcess = session.spawn(kwok, nodeName);
  session.commitNode(nodeName, (n) => {
    n.process = kwokProcess;
    n.power = "running";
  });
  session.progress.info(`node ${nodeName}: started (kwok pid ${kwokProcess.pid})`);
}

/** A partition that can heal: SIGSTOP freezes the node's kwok, or its shared kwok lets go of it. */
export async function partitionSimNode(session: SimSession, nodeName: string): Promise<void> {
  session.reload();
  const node = session.node(nodeName);
  const cannot = () =>
    new RekindleError("CONFLICT", `node ${nodeName} cannot be partitioned: it is ${node.power}`, {
      hint: `start it first: rekindle sim node start ${nodeName}`,
    });
  if (node.group !== undefined) {
    if (node.power !== "running") throw cannot();
    await setGroupLabel(session, node, null);
  } else if (!node.process || !signalDaemon(node.process, "SIGSTOP")) {
    throw cannot();
  }
  session.commitNode(nodeName, (n) => {
    n.power = "partitioned";
  });
  session.progress.info(
    `node ${nodeName}: partitioned (${node.group === undefined ? "kwok stopped with SIGSTOP" : `released from kwok ${node.group}`})`,
  );
}

export async function healSimNode(session: SimSession, nodeName: string): Promise<void> {
  session.reload();
  const node = session.node(nodeName);
  if (node.power !== "partitioned" || (node.group === undefined && !node.process)) {
    throw new RekindleError("CONFLICT", `node ${nodeName} is not partitioned (it is ${node.power})`);
  }
  if (node.group !== undefined) await setGroupLabel(session, node, node.group);
  else if (node.process) signalDaemon(node.process, "SIGCONT");
  session.commitNode(nodeName, (n) => {
    n.power = "running";
  });
  session.progress.info(
    `node ${nodeName}: healed (${node.group === undefined ? "kwok continued" : `kwok ${node.group} plays it again`})`,
  );
}

/** Puts the group label on the Node (its shared kwok plays it) or takes it away (null). */
async function setGroupLabel(session: SimSession, node: SimNodeState, value: string | null): Promise<void> {
  const core = session.kubeConfig().makeApiClient(k8s.CoreV1Api);
  await core.patchNode(
    { name: node.name, body: { metadata: { labels: { [SIM_KWOK_GROUP_LABEL]: value } } } },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
  );
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
