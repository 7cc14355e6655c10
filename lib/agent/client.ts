// rekindle's side of the agent's protocol: write a request for a node, wait for the agent on that
// node to answer it. One request object per (node, action), replaced on every change.
import { randomBytes } from "node:crypto";
import { errorMessage, RekindleError } from "../errors.js";
import { isConflict, isNotFound, isPodReady, k8s } from "../kube/client.js";
import { silentProgress, type Progress } from "../util/progress.js";
import { pollUntil } from "../util/time.js";
import {
  AGENT_NAME,
  AGENT_NAMESPACE,
  decodeStatus,
  encodeRequest,
  requestName,
  type AgentAction,
  type AgentStatus,
  type Desired,
} from "./protocol.js";

export interface AgentClientTimeouts {
  /** The agent answers a request (it lists every 2 s; a node loss takes seconds). Default 90 s. */
  answerMs: number;
}

export const AGENT_CLIENT_TIMEOUTS: AgentClientTimeouts = { answerMs: 90_000 };

export interface AgentClientOptions {
  /** Default AGENT_NAMESPACE. */
  namespace?: string;
  timeouts?: Partial<AgentClientTimeouts>;
  progress?: Progress;
  signal?: AbortSignal;
}

export class AgentClient {
  readonly namespace: string;
  readonly #core: k8s.CoreV1Api;
  readonly #timeouts: AgentClientTimeouts;
  readonly #progress: Progress;
  readonly #signal: AbortSignal | undefined;

  constructor(kc: k8s.KubeConfig, options: AgentClientOptions = {}) {
    this.namespace = options.namespace ?? AGENT_NAMESPACE;
    this.#core = kc.makeApiClient(k8s.CoreV1Api);
    this.#timeouts = { ...AGENT_CLIENT_TIMEOUTS, ...options.timeouts };
    this.#progress = options.progress ?? silentProgress;
    this.#signal = options.signal;
  }

  /** Worker nodes with a Ready agent pod, by node name (the pod's name as value). */
  async readyAgents(): Promise<Map<string, string>> {
    const pods = await this.#core.listNamespacedPod({
      namespace: this.namespace,
      labelSelector: `app.kubernetes.io/name=${AGENT_NAME}`,
    });
    const ready = new Map<string, string>();
    for (const pod of pods.items)
      if (pod.metadata?.deletionTimestamp === undefined && isPodReady(pod) && pod.spec?.nodeName)
        ready.set(pod.spec.nodeName, pod.metadata?.name ?? "");
    return ready;
  }

  /** Applies `action` on `node` until `deadline` (the agent reverts by itself then); resolves once applied. */
  async apply(node: string, action: AgentAction, deadline: Date): Promise<AgentStatus> {
    const ready = await this.readyAgents();
    if (!ready.has(node)) {
      throw new RekindleError(
        "PRECONDITION",
        `no Ready rekindle agent on node ${node} (namespace ${this.namespace})`,
        {
          hint: `agents are Ready on: ${[...ready.keys()].join(", ") || "no node"}; rekindle agent install puts one on every worker`,
        },
      );
    }
    const status = await this.#request(node, action, "applied", deadline);
    if (status.state !== "applied") {
      throw new RekindleError(
        "COMMAND_FAILED",
        `the agent on ${node} did not apply ${action}: ${status.message}`,
        {
          details: { node, action, status },
        },
      );
    }
    return status;
  }

  /** Reverts `action` on `node` (a no-op when not applied) and removes its request. */
  async revert(node: string, action: AgentAction): Promise<AgentStatus> {
    const status = await this.#request(node, action, "reverted", new Date());
    if (status.state === "failed")
      throw new RekindleError(
        "COMMAND_FAILED",
        `the agent on ${node} could not revert ${action}: ${status.message}`,
        {
          details: { node, action, status },
        },
      );
    await this.#core
      .deleteNamespacedConfigMap({ name: requestName(node, action), namespace: this.namespace })
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    return status;
  }

  async #request(node: string, action: AgentAction, desired: Desired, deadline: Date): Promise<AgentStatus> {
    const id = randomBytes(6).toString("hex");
    const name = requestName(node, action);
    const body = encodeRequest(
      { name, node, action, desired, deadline: deadline.toISOString(), id },
      this.namespace,
    );
    try {
      await this.#core.createNamespacedConfigMap({ namespace: this.namespace, body });
    } catch (error) {
      if (!isConflict(error)) throw error;
      await this.#core.replaceNamespacedConfigMap({ name, namespace: this.namespace, body });
    }
    const phase = this.#progress.phase(
      `${desired === "applied" ? "applying" : "reverting"} ${action} on ${node} (agent)`,
    );
    try {
      const status = await pollUntil(
        async () => {
          const current = await this.#core.readNamespacedConfigMap({ name, namespace: this.namespace });
          const answer = decodeStatus(current);
          return answer?.answers === id ? answer : undefined;
        },
        {
          timeoutMs: this.#timeouts.answerMs,
          // One ConfigMap read: cheap; the agent, woken by its watch, answers within a few hundred ms.
          intervalMs: 200,
          what: `the rekindle agent on ${node} to answer request ${this.namespace}/${name}`,
          ...(this.#signal ? { signal: this.#signal } : {}),
        },
      );
      phase.end(`${status.state}: ${status.message}`);
      return status;
    } catch (error) {
      phase.end(`no answer: ${errorMessage(error)}`);
      throw error;
    }
  }
}
