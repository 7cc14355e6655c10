// The fault journal: one record per fault in the cluster under test, written before the fault's
// first side effect, rewritten as each node is hit, removed once the fault is reverted. It outlives
// the process that wrote it, so `rekindle reap` (and the next run) can undo what a dead run left.
import { errorMessage } from "../errors.js";
import { isConflict, isNotFound, k8s } from "../kube/client.js";
import {
  decodeRecord,
  encodeRecord,
  JOURNAL_LABEL,
  JOURNAL_NAMESPACE,
  journalSelector,
} from "./record-codec.js";
import type { FaultRecord } from "./types.js";

/** A ConfigMap that holds no readable record, with the reason. */
export interface UnreadableRecord {
  name: string;
  reason: string;
}

export interface FaultJournal {
  /** Creates the record, or replaces it with this version. */
  write(record: FaultRecord): Promise<void>;
  /** Removes the record; a record already gone is fine. */
  remove(id: string): Promise<void>;
  /** Every record (of one run, given its id), and the ConfigMaps that hold none. */
  list(runId?: string): Promise<{ records: FaultRecord[]; unreadable: UnreadableRecord[] }>;
}

/** The part of the Kubernetes API the journal uses (CoreV1Api has it; unit tests fake it). */
export interface JournalApi {
  createNamespace(param: { body: k8s.V1Namespace }): Promise<unknown>;
  createNamespacedConfigMap(param: { namespace: string; body: k8s.V1ConfigMap }): Promise<unknown>;
  replaceNamespacedConfigMap(param: {
    name: string;
    namespace: string;
    body: k8s.V1ConfigMap;
  }): Promise<unknown>;
  deleteNamespacedConfigMap(param: { name: string; namespace: string }): Promise<unknown>;
  listNamespacedConfigMap(param: { namespace: string; labelSelector: string }): Promise<k8s.V1ConfigMapList>;
}

/** The journal as ConfigMaps in JOURNAL_NAMESPACE (created on the first write). */
export class ConfigMapJournal implements FaultJournal {
  readonly #api: JournalApi;
  #namespaceReady = false;

  constructor(api: JournalApi) {
    this.#api = api;
  }

  static forCluster(kc: k8s.KubeConfig): ConfigMapJournal {
    return new ConfigMapJournal(kc.makeApiClient(k8s.CoreV1Api));
  }

  async #ensureNamespace(): Promise<void> {
    if (this.#namespaceReady) return;
    try {
      await this.#api.createNamespace({
        // Not a run's namespace (no run label): it outlives runs, holding each one's records until reverted.
        body: { metadata: { name: JOURNAL_NAMESPACE, labels: { [JOURNAL_LABEL]: "namespace" } } },
      });
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
    this.#namespaceReady = true;
  }

  async write(record: FaultRecord): Promise<void> {
    await this.#ensureNamespace();
    const body = encodeRecord(record);
    try {
      await this.#api.createNamespacedConfigMap({ namespace: JOURNAL_NAMESPACE, body });
    } catch (error) {
      if (!isConflict(error)) throw error;
      await this.#api.replaceNamespacedConfigMap({ name: record.id, namespace: JOURNAL_NAMESPACE, body });
    }
  }

  async remove(id: string): Promise<void> {
    try {
      await this.#api.deleteNamespacedConfigMap({ name: id, namespace: JOURNAL_NAMESPACE });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async list(runId?: string): Promise<{ records: FaultRecord[]; unreadable: UnreadableRecord[] }> {
    let items: k8s.V1ConfigMap[];
    try {
      const list = await this.#api.listNamespacedConfigMap({
        namespace: JOURNAL_NAMESPACE,
        labelSelector: journalSelector(runId),
      });
      items = list.items;
    } catch (error) {
      // No namespace yet: nothing was ever journalled here.
      if (isNotFound(error)) return { records: [], unreadable: [] };
      throw error;
    }
    const records: FaultRecord[] = [];
    const unreadable: UnreadableRecord[] = [];
    for (const item of items) {
      try {
        const record = decodeRecord(item);
        // The label is the run id cut to a label's size: the record's own says whose it is.
        if (runId === undefined || record.runId === runId) records.push(record);
      } catch (error) {
        unreadable.push({ name: item.metadata?.name ?? "(unnamed)", reason: errorMessage(error) });
      }
    }
    return { records, unreadable };
  }
}
