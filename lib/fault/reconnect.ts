// How `rekindle reap` reaches a dead run's faulted nodes again, from the locator in its journal
// record alone: the sim through its state directory (as `rekindle sim node` attaches), kind through
// the node containers on the engine the record names, a cluster rekindle did not create through its
// node agent (lib/agent/) with the reaping process's kubeconfig. It only reverts; applying is a run's job.
import { AgentClient } from "../agent/client.js";
import { pressureAction } from "../agent/capabilities.js";
import type { AgentAction } from "../agent/protocol.js";
import type { NodeFaultLocator } from "../cluster/provider.js";
import { KindNodes } from "../cluster/kind/nodes.js";
import { relieveNode } from "../cluster/kind/pressure.js";
import { restoreMemoryCommand, restoreNodefsCommand, shrunkCommand } from "../cluster/kind/small-node.js";
import { SimCluster } from "../cluster/sim/cluster.js";
import { clearSimPressure } from "../cluster/sim/kubelet/pressure.js";
import { SimClusterUnderTest } from "../cluster/sim/under-test.js";
import { RekindleError } from "../errors.js";
import type { k8s } from "../kube/client.js";
import { silentProgress, type Progress } from "../util/progress.js";
import type { FaultActuator } from "./actuator.js";
import { describeAction, type FaultAction } from "./types.js";

/** An actuator that reverts `action` on the nodes `locator` names. */
export type Reconnect = (locator: NodeFaultLocator, action: FaultAction) => Promise<FaultActuator>;

function revertOnly(action: FaultAction, revert: (node: string) => Promise<void>): FaultActuator {
  return {
    apply: () =>
      Promise.reject(
        new RekindleError("INTERNAL", `a reconnected ${describeAction(action)} can only be reverted`),
      ),
    revert,
  };
}

function simActuator(root: string, action: FaultAction, progress: Progress): FaultActuator {
  const cluster = SimCluster.open(root, progress);
  // keep: this is not the run that owns the cluster; reaping must never tear it down.
  const sim = new SimClusterUnderTest(cluster, { keep: true, progress });
  switch (action.kind) {
    case "stop":
    case "graceful-shutdown":
      return revertOnly(action, (node) => sim.startNode(node));
    case "partition":
      return revertOnly(action, (node) => sim.healNode(node));
    case "pressure":
      // The simulated eviction manager died with its run; its condition is what stays.
      return revertOnly(action, (node) => clearSimPressure(cluster.kubeConfig(), node, action.pressure));
  }
}

/** The engine the record's nodes run on; this process talks to one engine only. */
function useEngine(dockerHost: string | undefined): void {
  const current = process.env["DOCKER_HOST"];
  if (dockerHost === undefined || current === dockerHost) return;
  if (current !== undefined && current !== "") {
    throw new RekindleError(
      "PRECONDITION",
      `the fault's kind nodes run on the engine at ${dockerHost}, this process talks to ${current}`,
      { hint: `run rekindle reap with DOCKER_HOST=${dockerHost}` },
    );
  }
  process.env["DOCKER_HOST"] = dockerHost;
}

function kindActuator(cluster: string, dockerHost: string | undefined, action: FaultAction): FaultActuator {
  useEngine(dockerHost);
  const nodes = new KindNodes(cluster);
  switch (action.kind) {
    case "stop":
    case "graceful-shutdown":
      return revertOnly(action, (node) => nodes.start(node));
    case "partition":
      return revertOnly(action, (node) => nodes.unpause(node));
    case "pressure":
      // The fill removed, and the node its real size to its kubelet again (small-node.ts).
      return revertOnly(action, async (node) => {
        await relieveNode(nodes, node, action.pressure);
        if (action.pressure === "memory") {
          await nodes.run(node, restoreMemoryCommand(), "restoring the node's meminfo and memory limit");
        } else if ((await nodes.exec(node, shrunkCommand("disk"))).exitCode === 0) {
          await nodes.run(node, restoreNodefsCommand(), "putting the kubelet back on its own filesystem");
        }
      });
  }
}

/** The agent's action for a fault action; undefined for one it does not offer (graceful shutdown). */
function agentAction(action: FaultAction): AgentAction | undefined {
  switch (action.kind) {
    case "stop":
    case "partition":
      return action.kind;
    case "pressure":
      return pressureAction(action.pressure);
    case "graceful-shutdown":
      return undefined;
  }
}

/** Through the agent in `namespace`: a revert request to the node's agent, answered once undone. */
function agentActuator(
  kubeConfig: (() => k8s.KubeConfig) | undefined,
  namespace: string,
  action: FaultAction,
  progress: Progress,
): FaultActuator {
  if (kubeConfig === undefined) {
    throw new RekindleError("INTERNAL", "reverting through the node agent needs the cluster's kubeconfig");
  }
  const client = new AgentClient(kubeConfig(), { namespace, progress });
  const kind = agentAction(action);
  if (kind === undefined) {
    // Never applied through the agent (it offers no graceful shutdown): nothing of it to revert.
    return revertOnly(action, () => Promise.resolve());
  }
  return revertOnly(action, async (node) => {
    await client.revert(node, kind);
  });
}

export interface ReconnectOptions {
  /** The cluster the journal is in (asked for only when needed): faults on an existing cluster are reverted through its agent. */
  kubeConfig?: () => k8s.KubeConfig;
}

/** Reconnects from a locator (Reconnect's default). */
export function reconnectFromLocator(
  progress: Progress = silentProgress,
  options: ReconnectOptions = {},
): Reconnect {
  return (locator, action) => {
    try {
      return Promise.resolve(
        locator.provider === "sim"
          ? simActuator(locator.root, action, progress)
          : locator.provider === "kind"
            ? kindActuator(locator.cluster, locator.dockerHost, action)
            : agentActuator(options.kubeConfig, locator.agentNamespace, action, progress),
      );
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };
}
