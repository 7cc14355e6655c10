// A worker's power as the sim plays it. A node with its own kwok: SIGKILL is node loss, a fresh
// process is the node coming back, SIGSTOP/SIGCONT is a partition that heals. A fleet node in a
// shared kwok (kwok-groups.ts): its group label taken away is loss or partition (the kwok stops
// renewing its Lease and leaves its pods as they are), the label put back returns it.
import { RekindleError } from "../../../errors.js";
import { isNotFound, k8s } from "../../../kube/client.js";
import { forEachBounded } from "../../../util/bounded-parallel.js";
import { nameList } from "../../../util/name-list.js";
import { sleep } from "../../../util/time.js";
import { untrackProcess } from "../../../util/cleanup.js";
import { isDaemonRunning, signalDaemon } from "../../../util/daemon.js";
import { SIM_KWOK_GROUP_LABEL } from "./kwok-groups.js";
import type { SimSession } from "../boot/session.js";
import type { SimNodeState } from "../boot/state.js";
import { nodeProcessRunning } from "../boot/status.js";

/** How many Node label patches a batch stop or start of shared-kwok nodes has under way at once. */
const BATCH_PATCHES = 16;

/**
 * From a powered-off node's power-on to its kwok starting: the boot before a kubelet runs (firmware,
 * systemd, containerd). On kind a node was Ready 2.6–3.1 s after the power-on request (docker start,
 * then systemd; partition/healed-after-fence, 5 runs, 2026-11-26). A fresh kwok posted Ready
 * 0.0–2.1 s after starting in the sim's runs of that day (about 1 s on average), so the boot is the
 * rest: with 1 s the sim's node was Ready 1.0–3.2 s after the request. Nodes powered on together
 * boot together.
 */
export const SIM_NODE_BOOT_MS = 1_800;

/** Options of a batch stop or start. */
export interface NodeBatchOptions {
  /** Called as each node's own change is made (before the state file records the batch). */
  onEach?: (nodeName: string) => void;
}

/** Node loss: SIGKILL the node's kwok, or release it from its shared kwok. Its Lease stops renewing. */
export async function stopSimNode(session: SimSession, nodeName: string): Promise<void> {
  await stopSimNodes(session, [nodeName]);
}

/**
 * Node loss of several nodes in one event (a zone outage): each as stopSimNode, the label patches
 * BATCH_PATCHES at once and the state file written once. Node by node, a thousand-node fleet's
 * state was re-read and re-written for every stop, so stopping a third of it took about a minute
 * (bench/controller.ts). Every name is checked before any node is touched; the nodes whose change
 * was made are recorded stopped even when another's failed, and the first failure is thrown.
 */
export async function stopSimNodes(
  session: SimSession,
  nodeNames: readonly string[],
  options: NodeBatchOptions = {},
): Promise<void> {
  session.reload();
  const nodes = nodeNames.map((name) => session.node(name));
  await changeInBatch(session, nodes, {
    act: async (node) => {
      if (node.group !== undefined) {
        if (node.power === "running") await setGroupLabel(session, node, null);
      } else if (node.process) {
        signalDaemon(node.process, "SIGKILL");
        untrackProcess(node.name);
      }
    },
    record: (n) => {
      n.process = undefined;
      n.power = "stopped";
    },
    announce: (stopped) => {
      const [only] = nodes;
      if (nodes.length === 1 && only && stopped.length === 1) {
        const how = only.group === undefined ? "kwok killed" : `released from kwok ${only.group}`;
        session.progress.info(`node ${only.name}: stopped (${how})`);
      } else if (stopped.length > 0) {
        session.progress.info(
          `${stopped.length} of ${nodes.length} nodes stopped at once (${nameList(stopped)})`,
        );
      }
    },
    ...(options.onEach ? { onEach: options.onEach } : {}),
  });
}

/** What a batch does to each node, and how the state file and the log record it. */
interface BatchChange {
  /** The node's own change (a label patch, a signal). */
  act: (node: SimNodeState) => Promise<void>;
  /** Its record in the state file once changed. */
  record: (node: SimNodeState) => void;
  /** Told the nodes changed, also after a failure. */
  announce: (changed: string[]) => void;
  onEach?: (nodeName: string) => void;
}

/**
 * Runs each node's change BATCH_PATCHES at once, then records the nodes changed in one write of
 * the state file, also when one failed (its first failure is thrown after).
 */
async function changeInBatch(
  session: SimSession,
  nodes: readonly SimNodeState[],
  change: BatchChange,
): Promise<void> {
  const changed: string[] = [];
  try {
    await forEachBounded(nodes, BATCH_PATCHES, async (node) => {
      await change.act(node);
      changed.push(node.name);
      change.onEach?.(node.name);
    });
  } finally {
    session.commitNodes(changed, change.record);
    change.announce(changed);
  }
}

/**
 * Off, not frozen: a partitioned node is on (healSimNode), a stopped one needs a boot. A fleet node
 * counts by its record only: its shared kwok being down is not this node's power.
 */
function isPoweredOff(session: SimSession, node: SimNodeState): boolean {
  if (node.power === "partitioned") return false;
  if (node.group !== undefined) return node.power === "stopped";
  return !nodeProcessRunning(session.state, node);
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

/**
 * Several nodes come back at once: the powered-off ones boot together (SIM_NODE_BOOT_MS), then
 * stopped shared-kwok nodes get their label again BATCH_PATCHES at once with the state file written
 * once; every other node (its own kwok, or partitioned) as startSimNode, one after another. Names
 * are checked first; the first failure is thrown after the changes made are recorded.
 */
export async function startSimNodes(
  session: SimSession,
  nodeNames: readonly string[],
  options: NodeBatchOptions = {},
): Promise<void> {
  session.reload();
  const poweredOff = nodeNames.filter((name) => isPoweredOff(session, session.node(name)));
  if (poweredOff.length > 0) {
    session.progress.info(
      `${nameList(poweredOff)}: powered on, booting (${SIM_NODE_BOOT_MS / 1000}s before the kubelet runs)`,
    );
    await sleep(SIM_NODE_BOOT_MS);
    session.reload();
  }
  const nodes = nodeNames.map((name) => session.node(name));
  const grouped = nodes.filter((n) => n.group !== undefined && n.power === "stopped");
  await changeInBatch(session, grouped, {
    act: (node) => setGroupLabel(session, node, node.group ?? null),
    record: (n) => {
      n.power = "running";
    },
    announce: (started) => {
      if (started.length > 0) {
        session.progress.info(`${started.length} nodes started at once: their shared kwoks play them again`);
      }
    },
    ...(options.onEach ? { onEach: options.onEach } : {}),
  });
  for (const node of nodes) {
    if (grouped.includes(node)) continue;
    await startSimNode(session, node.name);
    options.onEach?.(node.name);
  }
}

/**
 * The node's kwok stops writing (SIGSTOP, or its shared kwok lets go of it) while the node stays
 * recorded running, its power on: a graceful shutdown, whose kubelet the sim plays from here until
 * stopSimNode powers the node off (shutdown.ts). A kwok left running would report Ready again.
 */
export async function silenceSimNode(session: SimSession, nodeName: string): Promise<void> {
  session.reload();
  await freezeKwok(session, session.node(nodeName), "shut down", { runningOnly: true });
}

/**
 * Freezes the node's kwok: SIGSTOP, or its shared kwok lets go of it. CONFLICT, saying it cannot
 * `what`, when there is none to freeze (or, `runningOnly`, the node is not recorded running).
 */
async function freezeKwok(
  session: SimSession,
  node: SimNodeState,
  what: string,
  options: { runningOnly?: boolean } = {},
): Promise<void> {
  const cannot = () =>
    new RekindleError("CONFLICT", `node ${node.name} cannot ${what}: it is ${node.power}`, {
      hint: `start it first: rekindle sim node start ${node.name}`,
    });
  if ((node.group !== undefined || options.runningOnly === true) && node.power !== "running") throw cannot();
  if (node.group !== undefined) await setGroupLabel(session, node, null);
  else if (!node.process || !signalDaemon(node.process, "SIGSTOP")) throw cannot();
}

/** A partition that can heal: SIGSTOP freezes the node's kwok, or its shared kwok lets go of it. */
export async function partitionSimNode(session: SimSession, nodeName: string): Promise<void> {
  session.reload();
  const node = session.node(nodeName);
  await freezeKwok(session, node, "be partitioned");
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
