// Fakes for the fault layer's unit tests: a partition capability that logs what it does and can be
// told to fail on a node, and an in-memory fault journal that keeps every version written.
import type { NodePartition } from "../../lib/cluster/provider.js";
import { RekindleError } from "../../lib/errors.js";
import type { FaultJournal, UnreadableRecord } from "../../lib/fault/journal.js";
import type { FaultRecord } from "../../lib/fault/types.js";

export class FakePartition implements NodePartition {
  readonly log: string[] = [];
  readonly partitioned = new Set<string>();
  /** Nodes whose partition fails (after partly applying: the node is partitioned, then it throws). */
  readonly failOn = new Set<string>();
  /** Nodes whose heal fails (once). */
  readonly healFailsOn = new Set<string>();

  partitionNode(name: string): Promise<void> {
    this.log.push(`partition ${name}`);
    this.partitioned.add(name);
    if (this.failOn.has(name))
      return Promise.reject(new RekindleError("COMMAND_FAILED", `cannot cut ${name}`));
    return Promise.resolve();
  }

  healNode(name: string): Promise<void> {
    this.log.push(`heal ${name}`);
    if (this.healFailsOn.delete(name)) return Promise.reject(new Error(`heal of ${name} refused`));
    this.partitioned.delete(name);
    return Promise.resolve();
  }
}

export class MemoryJournal implements FaultJournal {
  readonly records = new Map<string, FaultRecord>();
  /** Every write, in order (a copy of the record as written). */
  readonly writes: FaultRecord[] = [];
  readonly unreadable: UnreadableRecord[] = [];

  write(record: FaultRecord): Promise<void> {
    const copy = structuredClone(record);
    this.records.set(record.id, copy);
    this.writes.push(copy);
    return Promise.resolve();
  }

  remove(id: string): Promise<void> {
    this.records.delete(id);
    return Promise.resolve();
  }

  list(runId?: string): Promise<{ records: FaultRecord[]; unreadable: UnreadableRecord[] }> {
    const records = [...this.records.values()].filter((r) => runId === undefined || r.runId === runId);
    return Promise.resolve({ records: structuredClone(records), unreadable: [...this.unreadable] });
  }
}
