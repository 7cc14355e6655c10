// Reaping: every fault the journal still holds whose run is gone is reverted from its record and
// the record removed. A fault whose run still runs is left to it (it reverts its own faults).
import { hostname } from "node:os";
import { errorMessage } from "../errors.js";
import type { k8s } from "../kube/client.js";
import { silentProgress, type Progress } from "../util/progress.js";
import { FaultHandle } from "./handle.js";
import type { FaultJournal, UnreadableRecord } from "./journal.js";
import { reconnectFromLocator, type Reconnect } from "./reconnect.js";
import { describeAction, type FaultHolder, type FaultRecord } from "./types.js";

export interface ReapOptions {
  journal: FaultJournal;
  /** Only this run's records. Default: every record. */
  runId?: string;
  /** Default: reconnectFromLocator (with kubeConfig). */
  reconnect?: Reconnect;
  /** The journal's cluster, for faults reverted through rekindle's node agent. Default: none (those fail). */
  kubeConfig?: k8s.KubeConfig;
  /** Whether the process that holds a fault still runs. Default: same host and its pid alive. */
  holderAlive?: (holder: FaultHolder) => boolean;
  now?: () => number;
  progress?: Progress;
}

/**
 * reverted: undone and its record removed; live: its run still runs (left to it); held: another
 * host's run, before its deadline (left unless named); failed: the revert did not complete.
 */
export type ReapOutcome = "reverted" | "live" | "held" | "failed";

export interface ReapEntry {
  record: FaultRecord;
  outcome: ReapOutcome;
  /** Why it was left or failed. */
  reason?: string;
}

export interface ReapReport {
  entries: ReapEntry[];
  unreadable: UnreadableRecord[];
}

/** Same host and `kill -0` finds the pid (EPERM: alive, someone else's). */
export function localHolderAlive(holder: FaultHolder): boolean {
  if (holder.host !== hostname()) return false;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function leftAlone(record: FaultRecord, options: ReapOptions): ReapEntry | undefined {
  const alive = options.holderAlive ?? localHolderAlive;
  if (alive(record.holder)) {
    return {
      record,
      outcome: "live",
      reason: `its run still runs (pid ${record.holder.pid} on ${record.holder.host}) and reverts it itself`,
    };
  }
  const now = (options.now ?? Date.now)();
  const { command } = record.holder;
  if (command !== undefined && options.runId === undefined && Date.parse(record.deadline) > now) {
    return {
      record,
      outcome: "held",
      reason: `left by \`${command}\` until its deadline ${record.deadline}; \`rekindle node start|heal\` ends it, or name it with --run-id ${record.runId} to reap it now`,
    };
  }
  const otherHost = record.holder.host !== hostname();
  if (otherHost && options.runId === undefined && Date.parse(record.deadline) > now) {
    return {
      record,
      outcome: "held",
      reason: `held by a run on ${record.holder.host} until ${record.deadline}; name it with --run-id ${record.runId} to reap it now`,
    };
  }
  return undefined;
}

async function reapOne(record: FaultRecord, options: ReapOptions, reconnect: Reconnect): Promise<ReapEntry> {
  const left = leftAlone(record, options);
  if (left) return left;
  try {
    const actuator = await reconnect(record.locator, record.action);
    const handle = new FaultHandle({
      record,
      actuator,
      journal: options.journal,
      ...(options.progress ? { progress: options.progress } : {}),
    });
    await handle.revert();
    return { record, outcome: "reverted" };
  } catch (error) {
    return { record, outcome: "failed", reason: errorMessage(error) };
  }
}

/** Reverts every record the journal holds (of one run, given its id) whose run is gone. */
export async function reapFaults(options: ReapOptions): Promise<ReapReport> {
  const { records, unreadable } = await options.journal.list(options.runId);
  const kc = options.kubeConfig;
  const reconnect =
    options.reconnect ??
    reconnectFromLocator(options.progress ?? silentProgress, kc ? { kubeConfig: () => kc } : {});
  const entries: ReapEntry[] = [];
  // Oldest first: a later fault may sit on top of an earlier one's node.
  const ordered = [...records].sort((a, b) => Date.parse(a.appliedAt) - Date.parse(b.appliedAt));
  for (const record of ordered) entries.push(await reapOne(record, options, reconnect));
  return { entries, unreadable };
}

/** Nothing left behind: every record found was reverted and every ConfigMap was readable. */
export function reapClean(report: ReapReport): boolean {
  return report.unreadable.length === 0 && report.entries.every((e) => e.outcome === "reverted");
}

/** "partition of worker-1, worker-2 (run R, fault F, applied at …)" */
export function describeRecord(record: FaultRecord): string {
  const nodes = record.nodes.filter((n) => n.state !== "reverted").map((n) => n.name);
  return `${describeAction(record.action)} of ${nodes.join(", ") || "no node yet"} (run ${record.runId}, ${record.id}, applied ${record.appliedAt}, due ${record.deadline})`;
}

/** What reaping found and did, one line each; a single line when the journal was empty. */
export function reapLines(report: ReapReport): string[] {
  if (report.entries.length === 0 && report.unreadable.length === 0)
    return ["fault journal: nothing left by an earlier run"];
  const lines = [`fault journal: ${report.entries.length + report.unreadable.length} record(s) found`];
  for (const entry of report.entries) {
    const what = describeRecord(entry.record);
    switch (entry.outcome) {
      case "reverted":
        lines.push(`  reverted ${what}`);
        break;
      case "failed":
        lines.push(`  FAILED to revert ${what}: ${entry.reason ?? ""}`);
        break;
      case "live":
      case "held":
        lines.push(`  left ${what}: ${entry.reason ?? ""}`);
        break;
    }
  }
  for (const bad of report.unreadable) lines.push(`  unreadable record ${bad.name}: ${bad.reason}`);
  return lines;
}
