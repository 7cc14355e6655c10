// What a dead run left besides its faults: the namespaces of its scenarios (a SIGKILLed run never
// reaches their undo). Reaping deletes them for the runs it found gone, on clusters rekindle did not
// create only: there a run's id is its own (ExistingCluster makes one per run), so its label names
// nothing else; on kind and the sim the id may be the cluster's, shared with what outlives the run.
import { RUN_LABEL } from "../kube/apply.js";
import { isNotFound, k8s } from "../kube/client.js";
import { releasePodGcProbes } from "../kube/podgc-pass.js";
import type { ReapReport } from "./reaper.js";

/** The runs reaping found gone: a `rekindle run` (not a verb) on an existing cluster, every record of it reverted. */
export function deadExistingRuns(report: ReapReport): string[] {
  const runs = new Map<string, boolean>();
  for (const { record, outcome } of report.entries) {
    const eligible =
      outcome === "reverted" && record.locator.provider === "existing" && record.holder.command === undefined;
    runs.set(record.runId, (runs.get(record.runId) ?? true) && eligible);
  }
  return [...runs].filter(([, ok]) => ok).map(([run]) => run);
}

/** Deletes the namespaces labelled with each of `runIds`; returns "namespace (run)" for each one deleted. */
export async function deleteRunNamespaces(kc: k8s.KubeConfig, runIds: readonly string[]): Promise<string[]> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const deleted: string[] = [];
  for (const runId of runIds) {
    const namespaces = await core.listNamespace({ labelSelector: `${RUN_LABEL}=${runId}` });
    for (const ns of namespaces.items) {
      const name = ns.metadata?.name ?? "";
      try {
        await releasePodGcProbes(kc, name);
        await core.deleteNamespace({ name });
        deleted.push(`${name} (run ${runId})`);
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }
  return deleted;
}
