// Every run against a cluster reaps first: a node a dead run left stopped, partitioned or filled
// would skew this run's numbers. It says what it found (one line when nothing).
import type { ClusterUnderTest } from "../cluster/provider.js";
import { errorMessage, RekindleError } from "../errors.js";
import { ConfigMapJournal, type FaultJournal } from "../fault/journal.js";
import { reapFaults, reapLines } from "../fault/reaper.js";
import { reconnectFromLocator } from "../fault/reconnect.js";
import type { Progress } from "../util/progress.js";

/**
 * Reverts what the cluster's fault journal holds from runs that are gone. A journal that cannot be
 * read is reported and the run goes on (the existing provider may lack the right to list
 * ConfigMaps); a fault found and not reverted stops the run before any scenario.
 */
export async function reapBeforeRun(
  cluster: ClusterUnderTest,
  progress: Progress,
  journal: FaultJournal = ConfigMapJournal.forCluster(cluster.kubeConfig()),
): Promise<void> {
  let report;
  try {
    report = await reapFaults({
      journal,
      progress,
      // Faults on an existing cluster are reverted through its agent, with the cluster's kubeconfig.
      reconnect: reconnectFromLocator(progress, { kubeConfig: () => cluster.kubeConfig() }),
    });
  } catch (error) {
    progress.info(`fault journal: not read (${errorMessage(error)}); reaping skipped`);
    return;
  }
  for (const line of reapLines(report)) progress.info(line);
  const failed = report.entries.filter((e) => e.outcome === "failed");
  if (failed.length > 0) {
    throw new RekindleError(
      "HARNESS_FAILED",
      `the cluster's fault journal holds ${failed.length} fault(s) an earlier run left that could not be reverted`,
      {
        hint: "see the lines above; fix what they say, then `rekindle reap` (it exits 0 once nothing is left)",
      },
    );
  }
}
