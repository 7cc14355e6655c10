// The node faults the existing provider offers on a cluster rekindle did not create: each a request
// to rekindle's node agent on that node (client.ts), carrying a deadline the agent keeps on the
// node. Graceful shutdown is not offered: the agent could power a node off (systemctl poweroff) but
// nothing on the node can power it back on, so the fault could not be reverted, at its deadline or
// ever; on bare metal, that is a fence driver's job (Redfish, fence agents, webhook).
import { RekindleError, errorMessage } from "../errors.js";
import type { ExistingNodeFaults, NodeFaultOptions, PressureKind } from "../cluster/provider.js";
import { isNotFound, k8s } from "../kube/client.js";
import type { Progress } from "../util/progress.js";
import { AgentClient, type AgentClientTimeouts } from "./client.js";
import { containersStopped } from "./node-ops.js";
import { AGENT_NAME, AGENT_NAMESPACE, type AgentAction } from "./protocol.js";

/** Why the agent offers no graceful shutdown (for the existing provider's `unsupported`). */
export const AGENT_NO_GRACEFUL_SHUTDOWN =
  "rekindle's node agent could power the node off, but nothing on the node could power it back on at the fault's deadline; use a fence driver (Redfish, fence agents, webhook)";

/** Until when a fault lasts when the caller says nothing (as the fault layer's FAULT_DEADLINES.defaultMs). */
export const AGENT_DEFAULT_DEADLINE_MS = 3_600_000;

export interface AgentNodeFaultsOptions {
  /** Default "rekindle-agent". */
  namespace?: string;
  /** Each fault's deadline from when it is applied; the agent reverts it then by itself. Default 1 h. */
  deadlineMs?: number;
  timeouts?: Partial<AgentClientTimeouts>;
  progress?: Progress;
  signal?: AbortSignal;
}

/** The agent's action for pressure of `kind`. */
export function pressureAction(kind: PressureKind): AgentAction {
  return kind === "memory" ? "pressure-memory" : "pressure-disk";
}

/**
 * Node loss through the agent. One that leaves the node's containers running is not one: a
 * scenario that then released the node's volumes would let a replacement write beside the live
 * copy. An agent that does not say it stopped them (one older than this rekindle) is undone and
 * refused.
 */
export async function stopThroughAgent(
  client: Pick<AgentClient, "apply" | "revert">,
  node: string,
  deadline: Date,
): Promise<void> {
  const status = await client.apply(node, "stop", deadline);
  if (containersStopped(status.message) !== undefined) return;
  await client.revert(node, "stop");
  throw new RekindleError(
    "PRECONDITION",
    `the agent on ${node} stopped the kubelet and runtime but not the node's containers (${status.message}): a scenario that released the node's volumes could make two writers`,
    {
      hint: "reinstall the agent with this rekindle's image: rekindle agent uninstall, then rekindle agent install",
    },
  );
}

/** Throws unless the agent's DaemonSet exists and schedules pods. */
async function checkInstalled(kc: k8s.KubeConfig, namespace: string): Promise<void> {
  let daemonSet: k8s.V1DaemonSet;
  try {
    daemonSet = await kc
      .makeApiClient(k8s.AppsV1Api)
      .readNamespacedDaemonSet({ name: AGENT_NAME, namespace });
  } catch (error) {
    if (isNotFound(error))
      throw new RekindleError(
        "PRECONDITION",
        `rekindle's node agent is not installed (no DaemonSet ${namespace}/${AGENT_NAME})`,
        {
          hint: "install it with: rekindle agent install",
        },
      );
    throw new RekindleError(
      "UNREACHABLE",
      `cannot read the agent's DaemonSet ${namespace}/${AGENT_NAME}: ${errorMessage(error)}`,
      {
        cause: error,
      },
    );
  }
  // Not every pod need be Ready: the agent on a node this or a dead run stopped is not, and is the one
  // that reverts it. Applying a fault checks that node's agent is Ready (client.ts).
  if ((daemonSet.status?.desiredNumberScheduled ?? 0) === 0)
    throw new RekindleError(
      "PRECONDITION",
      `rekindle's node agent runs on no node (DaemonSet ${namespace}/${AGENT_NAME} schedules no pod)`,
      { hint: `see kubectl -n ${namespace} describe daemonset ${AGENT_NAME}` },
    );
}

/** The capability objects over the agent; throws RekindleError when it is not installed. */
export async function agentNodeFaults(
  kc: k8s.KubeConfig,
  options: AgentNodeFaultsOptions = {},
): Promise<ExistingNodeFaults> {
  const namespace = options.namespace ?? AGENT_NAMESPACE;
  await checkInstalled(kc, namespace);
  const client = new AgentClient(kc, {
    namespace,
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.progress ? { progress: options.progress } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  // The fault handle's deadline when the caller gives one, so the node reverts when the journal says.
  const deadline = (given: NodeFaultOptions | undefined) =>
    given?.deadline ?? new Date(Date.now() + (options.deadlineMs ?? AGENT_DEFAULT_DEADLINE_MS));
  const apply = async (node: string, action: AgentAction, given?: NodeFaultOptions) => {
    await client.apply(node, action, deadline(given));
  };
  const revert = async (node: string, action: AgentAction) => {
    await client.revert(node, action);
  };
  return {
    lifecycle: {
      stopNode: (node, given) => stopThroughAgent(client, node, deadline(given)),
      startNode: (node) => revert(node, "stop"),
    },
    partition: {
      partitionNode: (node, given) => apply(node, "partition", given),
      healNode: (node) => revert(node, "partition"),
    },
    pressure: {
      applyPressure: (node, kind, given) => {
        // The request is the fault's start: the agent fills at once on receipt.
        given?.onEffect?.();
        return apply(node, pressureAction(kind), given);
      },
      relievePressure: (node, kind) => revert(node, pressureAction(kind)),
    },
  };
}
