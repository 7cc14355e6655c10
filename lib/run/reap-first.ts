// Every run against a cluster reaps first: a node a dead run left stopped, partitioned or filled
// would skew this run's numbers. It says what it found (one line when nothing).
import type { ClusterUnderTest } from "../cluster/provider.js";
import { errorMessage, RekindleError } from "../errors.js";
import { deadExistingRuns, deleteRunNamespaces } from "../fault/dead-run-namespaces.js";
import { ConfigMapJournal, type FaultJournal } from "../fault/journal.js";
import { describeRecord, reapFaults, reapLines, type ReapEntry } from "../fault/reaper.js";
import { reconnectFromLocator } from "../fault/reconnect.js";
import type { Progress } from "../util/progress.js";

/**
 * Reverts what the cluster's fault journal holds from runs that are gone. A journal that cannot be
 * read is reported and the run goes on (the existing provider may lack the right to list
 * ConfigMaps), unless faults are allowed on a cluster rekindle did not create: then it stops the
 * run (no record of this run's faults could be kept). A fault found and not reverted, or another
 * run's fault still live (a run in progress, a `rekindle node` verb before its deadline), stops the
 * run before any scenario: two runs faulting one cluster would measure each other.
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
    if (cluster.faultRails !== undefined)
      throw new RekindleError(
        "HARNESS_FAILED",
        `the cluster's fault journal cannot be read (${errorMessage(error)}); faults are not started without it`,
        {
          hint: "the kubeconfig must be allowed to create, list and delete ConfigMaps in namespace rekindle-journal",
          cause: error,
        },
      );
    progress.info(`fault journal: not read (${errorMessage(error)}); reaping skipped`);
    return;
  }
  for (const line of reapLines(report)) progress.info(line);
  const dead = deadExistingRuns(report);
  try {
    if (dead.length > 0)
      for (const name of await deleteRunNamespaces(cluster.kubeConfig(), dead))
        progress.info(`  deleted namespace ${name}, left by the dead run`);
  } catch (error) {
    progress.info(`  the dead runs' namespaces not deleted: ${errorMessage(error)}`);
  }
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
  const live = report.entries.filter((e) => e.outcome === "live" || e.outcome === "held");
  if (live.length > 0) throw anotherRunsFault(live);
}

/** Whose fault is still live, and until when; what ends it sooner. */
function anotherRunsFault(live: readonly ReapEntry[]): RekindleError {
  const whose = live.map((e) => {
    const by = e.record.holder.command ?? `pid ${e.record.holder.pid}`;
    return `${describeRecord(e.record)}, held by ${by} on ${e.record.holder.host}`;
  });
  const latest =
    live
      .map((e) => e.record.deadline)
      .sort()
      .at(-1) ?? "";
  return new RekindleError(
    "HARNESS_FAILED",
    `the cluster's fault journal holds ${live.length} live fault(s) of another run, the last due by ${latest}: ${whose.join("; ")}`,
    {
      hint: `wait until ${latest}, or end them first: rekindle node start|heal <node>, or rekindle reap --run-id <run> (the run ids above)`,
      details: { faults: live.map((e) => e.record.id) },
    },
  );
}
