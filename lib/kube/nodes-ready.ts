// The wait for nodes to be usable: Ready, and no longer carrying the registration-time not-ready
// taint (until the node lifecycle controller lifts it, nothing schedules there).
import { k8s, nodeConditionStatus } from "./client.js";
import { hasTaint, NOT_READY_TAINT } from "./queries.js";
import { pollUntil } from "../util/time.js";

export interface NodesReadyOptions {
  timeoutMs: number;
  /** Poll interval. Default 500 ms. */
  intervalMs?: number;
  signal?: AbortSignal;
  /** Called about every 10 s while waiting, with the time waited and the nodes not yet usable. */
  onWait?: (elapsedMs: number, waitingFor: readonly string[]) => void;
}

/** Whether a node is Ready=True and carries no not-ready taint. */
export function isNodeUsable(node: k8s.V1Node): boolean {
  return nodeConditionStatus(node, "Ready") === "True" && !hasTaint(node, NOT_READY_TAINT);
}

/** Waits until every node of `names` is usable; TIMEOUT naming them otherwise. */
export async function waitForNodesReady(
  kc: k8s.KubeConfig,
  names: readonly string[],
  options: NodesReadyOptions,
): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  let waitingFor: string[] = [...names];
  await pollUntil(
    async () => {
      const usable = new Set((await core.listNode()).items.filter(isNodeUsable).map((n) => n.metadata?.name));
      waitingFor = names.filter((n) => !usable.has(n));
      return waitingFor.length === 0 ? true : undefined;
    },
    {
      what: `nodes ${names.join(", ")} to be Ready`,
      timeoutMs: options.timeoutMs,
      intervalMs: options.intervalMs ?? 500,
      ...(options.signal ? { signal: options.signal } : {}),
      onWait: (ms) => options.onWait?.(ms, waitingFor),
    },
  );
}
