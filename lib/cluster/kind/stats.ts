// What the kubelet itself reports for a node's eviction signals: its stats summary, read through
// the API server's node proxy (GET /api/v1/nodes/<node>/proxy/stats/summary).
import { RekindleError, errorMessage } from "../../errors.js";
import { k8s } from "../../kube/client.js";
import type { PressureKind } from "../provider.js";
import type { SignalStats } from "./fill.js";

export interface NodeSignalStats {
  memory: SignalStats;
  disk: SignalStats;
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function field(object: unknown, key: string): unknown {
  return typeof object === "object" && object !== null ? (object as Record<string, unknown>)[key] : undefined;
}

/**
 * memory.available and nodefs.available from a kubelet summary. Memory capacity is available +
 * working set, the kubelet's own definition of memory.available (capacity − working set).
 */
export function signalStatsFromSummary(node: string, summary: unknown): NodeSignalStats {
  const parsed: unknown = typeof summary === "string" ? JSON.parse(summary) : summary;
  const stats = field(parsed, "node");
  const memory = field(stats, "memory");
  const fs = field(stats, "fs");
  const memoryAvailable = num(field(memory, "availableBytes"));
  const workingSet = num(field(memory, "workingSetBytes"));
  const fsAvailable = num(field(fs, "availableBytes"));
  const fsCapacity = num(field(fs, "capacityBytes"));
  if (memoryAvailable === undefined || fsAvailable === undefined || fsCapacity === undefined) {
    throw new RekindleError("PRECONDITION", `the kubelet of node ${node} reported no memory or fs stats`, {
      hint: "node.memory.availableBytes, node.fs.availableBytes and node.fs.capacityBytes must be in /stats/summary; is the kubelet running?",
      details: { node },
    });
  }
  return {
    memory: { availableBytes: memoryAvailable, capacityBytes: memoryAvailable + (workingSet ?? 0) },
    disk: { availableBytes: fsAvailable, capacityBytes: fsCapacity },
  };
}

/** Reads the node's stats summary through the API server proxy. */
export async function fetchSignalStats(kc: k8s.KubeConfig, node: string): Promise<NodeSignalStats> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  let body: unknown;
  try {
    // Typed as string, but client-node parses JSON bodies: either shape is accepted.
    body = await core.connectGetNodeProxyWithPath({ name: node, path: "stats/summary" });
  } catch (error) {
    throw new RekindleError(
      "UNREACHABLE",
      `cannot read the kubelet stats of node ${node}: ${errorMessage(error)}`,
      {
        hint: "the node must be Ready and the API server able to reach its kubelet",
        details: { node },
        cause: error,
      },
    );
  }
  return signalStatsFromSummary(node, body);
}

export function statsFor(stats: NodeSignalStats, kind: PressureKind): SignalStats {
  return kind === "memory" ? stats.memory : stats.disk;
}
