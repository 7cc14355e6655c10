// The rails for faults on a cluster rekindle did not create: the user opts in (--allow-faults) and
// names the nodes (a label selector or names); rekindle refuses control-plane nodes, names that are
// not there, a selector that matches nothing, and more nodes than --max-faulted-nodes (default 1).
// The result is exact, so the preflight can say to which nodes faults will go before any does.
import { RekindleError } from "../../errors.js";
import type { k8s } from "../../kube/client.js";
import { isControlPlaneNode } from "../../kube/queries.js";
import type { CapabilityMap, ExistingNodeFaults, FaultRails } from "../provider.js";

/** What the user asked for on the command line (or a test). */
export interface FaultRailsRequest {
  /** --allow-faults: without it nothing on an existing cluster's nodes is touched. */
  allowFaults: boolean;
  /** --node-selector: a label selector, e.g. "pool=chaos" (the API's syntax). */
  selector?: string;
  /** --nodes: explicit node names. */
  nodes?: readonly string[];
  /** --max-faulted-nodes. Default DEFAULT_MAX_FAULTED_NODES. */
  maxNodes?: number;
  /** How messages name the choice. Default the flag and its value ("--nodes a,b"). */
  chosenBy?: string;
  /** --fault-deadline: checked with checkFaultDeadline. Default: the fault layer's (1 h). */
  deadlineMs?: number;
}

/** The longest a --fault-deadline may be: an hour (a forgotten fault must not outlive an afternoon). */
export const MAX_FAULT_DEADLINE_MS = 3_600_000;

/**
 * The shortest deadline a node fault can be tested in: the cluster marks the node lost after
 * node-monitor-grace-period and evicts its pods after the unreachable toleration; a fault reverted
 * sooner (plus a minute for the workloads to come back) ends before what it is meant to show.
 */
export function minFaultDeadlineMs(profile: {
  nodeMonitorGracePeriodSeconds: number;
  defaultUnreachableTolerationSeconds: number;
}): number {
  return (
    (profile.nodeMonitorGracePeriodSeconds + profile.defaultUnreachableTolerationSeconds) * 1000 + 60_000
  );
}

/** Refuses a --fault-deadline too short for the fault under `profile`, or longer than an hour. */
export function checkFaultDeadline(
  ms: number,
  profile: Parameters<typeof minFaultDeadlineMs>[0] & { name: string },
): void {
  const min = minFaultDeadlineMs(profile);
  if (ms > MAX_FAULT_DEADLINE_MS || ms < min)
    throw new RekindleError(
      "INVALID_INPUT",
      `--fault-deadline ${ms / 1000}s is ${ms > MAX_FAULT_DEADLINE_MS ? "longer than an hour" : "too short for the fault"}; valid: from ${min / 1000}s to ${MAX_FAULT_DEADLINE_MS / 1000}s`,
      {
        hint: `under profile ${profile.name} a lost node is marked after ${profile.nodeMonitorGracePeriodSeconds}s and its pods evicted after ${profile.defaultUnreachableTolerationSeconds}s more; the deadline must outlast that (and a minute), and no fault may outlive an hour`,
      },
    );
}

/** At most this many nodes faulted at once unless --max-faulted-nodes says otherwise. */
export const DEFAULT_MAX_FAULTED_NODES = 1;

/** Reads nodes: all, or those a label selector matches (CoreV1Api.listNode has it; tests fake it). */
export type ListNodes = (labelSelector?: string) => Promise<k8s.V1Node[]>;

const HOW = "name the nodes with --node-selector k=v or --nodes a,b";

/** Checks the flags alone (before the cluster is reached); undefined when faults are not asked for. */
export function checkRailsRequest(request: FaultRailsRequest): void {
  const { allowFaults, selector, nodes, maxNodes } = request;
  const named =
    selector !== undefined ||
    nodes !== undefined ||
    maxNodes !== undefined ||
    request.deadlineMs !== undefined;
  if (!allowFaults) {
    if (named)
      throw new RekindleError(
        "INVALID_INPUT",
        "--node-selector, --nodes, --max-faulted-nodes and --fault-deadline need --allow-faults",
        { hint: "add --allow-faults to let rekindle fault the nodes named (and only those)" },
      );
    return;
  }
  if (selector === undefined && nodes === undefined)
    throw new RekindleError("INVALID_INPUT", "--allow-faults needs the nodes it allows", { hint: HOW });
  if (selector !== undefined && nodes !== undefined)
    throw new RekindleError("INVALID_INPUT", "--node-selector and --nodes do not go together", {
      hint: "choose the nodes one way",
    });
  if (selector !== undefined && !/^[^=!,\s]+(=|==|!=)[^=,\s]*(,[^=!,\s]+(=|==|!=)[^=,\s]*)*$/.test(selector))
    throw RekindleError.invalidInput(
      "--node-selector",
      selector,
      "k=v, e.g. pool=chaos (comma-separated for more)",
    );
  if (nodes !== undefined && (nodes.length === 0 || nodes.some((n) => n.trim() === "")))
    throw RekindleError.invalidInput(
      "--nodes",
      nodes.join(","),
      "node names separated by commas, e.g. worker-1,worker-2",
    );
  if (maxNodes !== undefined && (!Number.isInteger(maxNodes) || maxNodes < 1 || maxNodes > 100))
    throw RekindleError.invalidInput("--max-faulted-nodes", maxNodes, "a whole number from 1 to 100");
}

/** Parses "a,b" of --nodes. */
export function parseNodeNames(text: string): string[] {
  return text.split(",").map((n) => n.trim());
}

/**
 * The nodes faults may hit, read from the cluster: every one named must exist, none may be a
 * control-plane node, and no more than maxNodes. A RekindleError (INVALID_INPUT) says which and why.
 */
export async function resolveFaultRails(
  request: FaultRailsRequest,
  listNodes: ListNodes,
): Promise<FaultRails> {
  checkRailsRequest(request);
  const maxNodes = request.maxNodes ?? DEFAULT_MAX_FAULTED_NODES;
  let chosen: k8s.V1Node[];
  let chosenBy: string;
  if (request.selector !== undefined) {
    chosenBy = request.chosenBy ?? `--node-selector ${request.selector}`;
    chosen = await listNodes(request.selector);
    if (chosen.length === 0)
      throw new RekindleError("INVALID_INPUT", `${chosenBy} matches no node of this cluster`, {
        hint: "label the nodes faults may hit (kubectl label node N k=v), or name them with --nodes",
      });
  } else {
    const names = [...new Set(request.nodes ?? [])];
    chosenBy = request.chosenBy ?? `--nodes ${names.join(",")}`;
    const all = await listNodes();
    const byName = new Map(all.map((n) => [n.metadata?.name ?? "", n]));
    const missing = names.filter((n) => !byName.has(n));
    if (missing.length > 0)
      throw RekindleError.invalidInput(
        "node",
        missing.join(","),
        [...byName.keys()].filter((n) => !isControlPlaneNode(byName.get(n) ?? {})).sort(),
      );
    chosen = names.map((n) => byName.get(n) ?? {});
  }
  const names = (nodes: k8s.V1Node[]) => nodes.map((n) => n.metadata?.name ?? "").sort();
  const controlPlane = chosen.filter(isControlPlaneNode);
  if (controlPlane.length > 0)
    throw new RekindleError(
      "INVALID_INPUT",
      `${chosenBy} takes in control-plane node(s) ${names(controlPlane).join(", ")}; rekindle never faults a control-plane node`,
      { hint: "narrow the selector or the names to worker nodes" },
    );
  if (chosen.length > maxNodes)
    throw new RekindleError(
      "INVALID_INPUT",
      `${chosenBy} names ${chosen.length} nodes (${names(chosen).join(", ")}), more than --max-faulted-nodes ${maxNodes}`,
      { hint: `narrow it to at most ${maxNodes}, or raise --max-faulted-nodes if that many may go at once` },
    );
  return {
    allowedNodes: names(chosen),
    maxNodes,
    chosenBy,
    ...(request.deadlineMs !== undefined ? { deadlineMs: request.deadlineMs } : {}),
  };
}

/** Refuses a node outside the rails: the wall every fault passes (lib/fault) and the agent's capabilities. */
export function checkRailsNode(rails: FaultRails, node: string): void {
  if (!rails.allowedNodes.includes(node))
    throw new RekindleError(
      "INVALID_INPUT",
      `node ${node} is not among the nodes faults are allowed on (${rails.allowedNodes.join(", ")}, by ${rails.chosenBy})`,
      {
        hint: "rekindle faults only the nodes --node-selector or --nodes chose on a cluster it did not create",
      },
    );
}

/** The agent's capabilities, each refusing a node outside the rails before it reaches the agent. */
export function guardedNodeFaults(faults: ExistingNodeFaults, rails: FaultRails): Partial<CapabilityMap> {
  const wall = (node: string) => {
    checkRailsNode(rails, node);
  };
  const { lifecycle, partition, pressure } = faults;
  const shutdown = faults["graceful-shutdown"];
  return {
    lifecycle: {
      stopNode: async (n, options) => (wall(n), lifecycle.stopNode(n, options)),
      startNode: async (n, options) => (wall(n), lifecycle.startNode(n, options)),
    },
    partition: {
      partitionNode: async (n, options) => (wall(n), partition.partitionNode(n, options)),
      healNode: async (n) => (wall(n), partition.healNode(n)),
    },
    pressure: {
      applyPressure: async (n, kind, options) => (wall(n), pressure.applyPressure(n, kind, options)),
      relievePressure: async (n, kind) => (wall(n), pressure.relievePressure(n, kind)),
    },
    ...(shutdown
      ? { "graceful-shutdown": { shutdownNode: async (n: string) => (wall(n), shutdown.shutdownNode(n)) } }
      : {}),
  };
}
