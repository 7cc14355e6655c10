// The agent's request protocol: one ConfigMap per (node, fault) in the agent's namespace, written by
// rekindle (what, where, until when, applied or reverted wanted) and answered by the agent on that
// node in the same object (state, message). Requests go through the API server, so nothing needs a
// route to the node; the deadline travels with the request and is kept on the node (deadline.ts).
import { RekindleError } from "../errors.js";
import type { k8s } from "../kube/client.js";

/** The agent's namespace (and DaemonSet name) unless told otherwise. */
export const AGENT_NAMESPACE = "rekindle-agent";
export const AGENT_NAME = "rekindle-agent";
/** Every request ConfigMap carries it (the agent lists by it). */
export const REQUEST_LABEL = "rekindle.dev/agent-request";

export const AGENT_ACTIONS = ["stop", "partition", "pressure-memory", "pressure-disk"] as const;
/** stop: kubelet and container runtime stopped, pods killed; partition: its traffic to the API server dropped. */
export type AgentAction = (typeof AGENT_ACTIONS)[number];

export type Desired = "applied" | "reverted";
/** What the agent reports: applied, reverted (on request or at the deadline), failed (message says). */
export type AgentState = "applied" | "reverted" | "failed";

export interface AgentRequest {
  /** The ConfigMap's name: one per node and action (requestName). */
  name: string;
  node: string;
  action: AgentAction;
  desired: Desired;
  /** When the agent reverts by itself, whatever it hears (ISO 8601). */
  deadline: string;
  /** New with every change of `desired`: the agent's answer names it, so an old answer is not taken for a new one. */
  id: string;
}

export interface AgentStatus {
  state: AgentState;
  message: string;
  /** ISO 8601. */
  at: string;
  /** The request id it answers. */
  answers: string;
}

/** A DNS-1123 name for the request of `action` on `node`, unique per pair, at most 253 characters. */
export function requestName(node: string, action: AgentAction): string {
  return `${action}.${node}`.toLowerCase().slice(0, 253);
}

function invalid(name: string, field: string, got: unknown, valid: string): RekindleError {
  return new RekindleError(
    "INVALID_INPUT",
    `agent request ${name}: ${field} is ${JSON.stringify(got)}; valid: ${valid}`,
    { details: { request: name, field } },
  );
}

export function encodeRequest(request: AgentRequest, namespace: string = AGENT_NAMESPACE): k8s.V1ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: request.name, namespace, labels: { [REQUEST_LABEL]: "true" } },
    data: {
      node: request.node,
      action: request.action,
      desired: request.desired,
      deadline: request.deadline,
      id: request.id,
    },
  };
}

/** The request a ConfigMap holds; a RekindleError naming the ConfigMap and field otherwise. */
export function decodeRequest(configMap: k8s.V1ConfigMap): AgentRequest {
  const name = configMap.metadata?.name ?? "(unnamed)";
  const data = configMap.data ?? {};
  const node = data["node"];
  if (node === undefined || node === "") throw invalid(name, "node", node, "a node name");
  const action = data["action"];
  if (!AGENT_ACTIONS.includes(action as AgentAction))
    throw invalid(name, "action", action, AGENT_ACTIONS.join(", "));
  const desired = data["desired"];
  if (desired !== "applied" && desired !== "reverted")
    throw invalid(name, "desired", desired, "applied, reverted");
  const deadline = data["deadline"];
  if (deadline === undefined || Number.isNaN(Date.parse(deadline)))
    throw invalid(name, "deadline", deadline, "an ISO 8601 time");
  const id = data["id"];
  if (id === undefined || id === "") throw invalid(name, "id", id, "a request id");
  return { name, node, action: action as AgentAction, desired, deadline, id };
}

/** The agent's answer in a request ConfigMap, undefined before it answered (or when unreadable). */
export function decodeStatus(configMap: k8s.V1ConfigMap): AgentStatus | undefined {
  const data = configMap.data ?? {};
  const state = data["state"];
  if (state !== "applied" && state !== "reverted" && state !== "failed") return undefined;
  return { state, message: data["message"] ?? "", at: data["stateAt"] ?? "", answers: data["answers"] ?? "" };
}

/** The data keys the agent merges into the request to answer it. */
export function encodeStatus(status: AgentStatus): Record<string, string> {
  return { state: status.state, message: status.message, stateAt: status.at, answers: status.answers };
}
