// Faults a command leaves behind on purpose (`rekindle node stop|partition|pressure <node>`): the
// fault outlives the command, so its journal record (holder: the command) and its deadline are all
// that bound it. `rekindle node start|heal <node>` ends it: reverts the node and removes the record.
import { hostname } from "node:os";
import { missingCapabilities, type ClusterUnderTest, type NodeCapability } from "../cluster/provider.js";
import { RekindleError } from "../errors.js";
import { silentProgress, type Progress } from "../util/progress.js";
import { capabilityActuator, type FaultActuator } from "./actuator.js";
import { FaultHandle } from "./handle.js";
import { FaultInjector } from "./injector.js";
import type { FaultJournal } from "./journal.js";
import { localHolderAlive } from "./reaper.js";
import { FAULT_DEADLINES, type FaultAction, type FaultKind, type FaultRecord } from "./types.js";

/** A verb's deadline: at least this (a revert sooner would race the apply on a slow node), at most an hour. */
export const VERB_DEADLINES = {
  minMs: 30_000,
  defaultMs: FAULT_DEADLINES.defaultMs,
  maxMs: 3_600_000,
} as const;

/** The capability each action needs (graceful shutdown is reverted by starting the node). */
const NEEDS: Record<FaultKind, NodeCapability[]> = {
  stop: ["lifecycle"],
  "graceful-shutdown": ["graceful-shutdown", "lifecycle"],
  partition: ["partition"],
  pressure: ["pressure"],
};

/** Refuses a --for outside [30 s, 1 h], saying what is valid. */
export function checkVerbDeadline(ms: number): void {
  if (!Number.isFinite(ms) || ms < VERB_DEADLINES.minMs || ms > VERB_DEADLINES.maxMs)
    throw new RekindleError(
      "INVALID_INPUT",
      `--for ${ms / 1000}s is out of range; valid: from ${VERB_DEADLINES.minMs / 1000}s to 1h`,
      {
        hint: "shorter than 30 s would race the fault's own apply; longer than an hour is not a test any more",
      },
    );
}

/** The cluster offers what `action` needs, or a RekindleError with the provider's reason. */
export function checkCanDo(cluster: ClusterUnderTest, action: FaultAction): void {
  const capable = missingCapabilities(cluster, NEEDS[action.kind]);
  if (capable.ok) return;
  const reasons = capable.missing.map((m) => `${m.capability}: ${m.reason}`).join("; ");
  throw new RekindleError(
    "UNSUPPORTED",
    `the ${cluster.provider} provider cannot do this fault (${reasons})`,
  );
}

export interface LeaveFaultOptions {
  cluster: ClusterUnderTest;
  journal: FaultJournal;
  action: FaultAction;
  node: string;
  /** From now. Default VERB_DEADLINES.defaultMs. */
  deadlineMs?: number;
  /** The command line that leaves it, e.g. "rekindle node partition" (the record's holder). */
  command: string;
  progress?: Progress;
}

/**
 * Applies the fault to one node through the fault layer (handle, journal, rails), and leaves it:
 * no undo is registered in this process. A failure reverts what was applied and removes the record.
 */
export async function leaveFault(options: LeaveFaultOptions): Promise<FaultRecord> {
  const { cluster, journal, action, node } = options;
  checkCanDo(cluster, action);
  const locator = cluster.faultLocator?.();
  if (locator === undefined)
    throw new RekindleError(
      "UNSUPPORTED",
      `the ${cluster.provider} provider names no way back to its nodes`,
      {
        hint: "a fault a command leaves must be journalled, so `rekindle reap` and `rekindle node start|heal` can end it",
      },
    );
  const injector = new FaultInjector({
    capabilities: cluster.capabilities,
    runId: `node-${action.kind}-${node}`,
    // The fault outlives this process on purpose: its record and deadline are its undo.
    undo: { registerUndo: () => undefined },
    journal,
    locator,
    ...(cluster.faultRails ? { rails: cluster.faultRails } : {}),
    holder: { host: hostname(), pid: process.pid, command: options.command },
    ...(options.progress ? { progress: options.progress } : {}),
  });
  const handle = await injector.inject({
    action,
    nodes: [node],
    deadlineMs: options.deadlineMs ?? VERB_DEADLINES.defaultMs,
  });
  return handle.record;
}

export interface EndFaultsOptions {
  cluster: ClusterUnderTest;
  journal: FaultJournal;
  node: string;
  /** Which faults to end: stop and graceful-shutdown for `start`; partition and pressure for `heal`. */
  kinds: readonly FaultKind[];
  /**
   * How a record's fault is reverted. Default: through this process's capabilities. A provider
   * whose revert needs state the applying process kept (kind's shrunk node) passes the reaper's
   * reconnect, which reverts from the record alone.
   */
  actuatorFor?: (record: FaultRecord) => Promise<FaultActuator>;
  progress?: Progress;
}

export interface EndedFaults {
  /** Records reverted and removed. */
  ended: FaultRecord[];
  /** Records left, each with why (a run still holding it, more nodes than this one). */
  left: { record: FaultRecord; reason: string }[];
}

/** Whether this command may end the record: a command's, or a dead run's of this host. */
function ownerGone(record: FaultRecord): string | undefined {
  if (record.holder.command !== undefined) return undefined;
  if (record.holder.host === hostname() && !localHolderAlive(record.holder)) return undefined;
  return `run ${record.runId} (pid ${record.holder.pid} on ${record.holder.host}) holds it and reverts it itself`;
}

/** Reverts the journalled faults of `kinds` on `node` and removes their records. */
export async function endNodeFaults(options: EndFaultsOptions): Promise<EndedFaults> {
  const { cluster, journal, node, kinds } = options;
  const { records } = await journal.list();
  const result: EndedFaults = { ended: [], left: [] };
  for (const record of records) {
    const live = record.nodes.filter((n) => n.state !== "reverted").map((n) => n.name);
    if (!kinds.includes(record.action.kind) || !live.includes(node)) continue;
    const busy =
      ownerGone(record) ??
      (live.length > 1
        ? `it faults ${live.join(", ")} together; rekindle reap --run-id ${record.runId} ends it`
        : undefined);
    if (busy !== undefined) {
      result.left.push({ record, reason: busy });
      continue;
    }
    const handle = new FaultHandle({
      record,
      actuator: options.actuatorFor
        ? await options.actuatorFor(record)
        : capabilityActuator(record.action, cluster.capabilities),
      journal,
      progress: options.progress ?? silentProgress,
    });
    await handle.revert();
    result.ended.push(record);
  }
  return result;
}
