// `rekindle reap`: reverts what runs that died (SIGKILL, OOM, a closed laptop) left faulted, from
// the fault journal in the cluster, and removes their records.
import { parseArgs } from "node:util";
import { errorMessage, RekindleError } from "../errors.js";
import { deadExistingRuns, deleteRunNamespaces } from "../fault/dead-run-namespaces.js";
import { ConfigMapJournal } from "../fault/journal.js";
import { JOURNAL_NAMESPACE } from "../fault/record-codec.js";
import { reapFaults, reapLines, type ReapReport } from "../fault/reaper.js";
import { loadKubeconfig } from "../kube/kubeconfig-load.js";
import { consoleProgress } from "../util/progress.js";
import { EXIT_CODES } from "./exit-codes.js";

export const REAP_USAGE = `rekindle reap [--kubeconfig K] [--context C] [--run-id R]
      revert every node fault the cluster's fault journal (ConfigMaps in namespace ${JOURNAL_NAMESPACE})
      still holds from a run that is gone, and remove its record; --run-id: only that run's.
      On a cluster rekindle did not create, the namespaces of such a run's scenarios go too.
      A fault whose run still runs on this machine is left to it; one held by a run on another
      machine is left until its deadline unless --run-id names that run.
      Kubeconfig as kubectl picks it (default $KUBECONFIG, else ~/.kube/config; its current context).
      Exit 0: nothing was left, or all of it reverted; 1: some left to a run still going;
      3: a revert failed, a record was unreadable, or the cluster did not answer`;

const OPTIONS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
  "run-id": { type: "string" },
} as const;

/** 0 clean, 1 something left to a live run, 3 a failure or an unreadable record. */
export function reapExitCode(report: ReapReport): number {
  if (report.unreadable.length > 0 || report.entries.some((e) => e.outcome === "failed"))
    return EXIT_CODES.infrastructure;
  if (report.entries.some((e) => e.outcome !== "reverted")) return EXIT_CODES.failed;
  return EXIT_CODES.passed;
}

export async function reapCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  if (positionals.length > 0) {
    throw new RekindleError(
      "INVALID_INPUT",
      `rekindle reap takes no arguments, got ${positionals.join(" ")}`,
      {
        hint: "it takes --kubeconfig, --context and --run-id",
      },
    );
  }
  const runId = values["run-id"];
  if (runId === "")
    throw new RekindleError("INVALID_INPUT", "--run-id is empty", {
      hint: "e.g. --run-id 20261124-100000-ab12",
    });
  const { kc, source } = loadKubeconfig({
    ...(values.kubeconfig !== undefined ? { path: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
  });
  const journal = ConfigMapJournal.forCluster(kc);
  let report: ReapReport;
  try {
    report = await reapFaults({
      journal,
      kubeConfig: kc,
      ...(runId !== undefined ? { runId } : {}),
      progress: consoleProgress(),
    });
  } catch (error) {
    throw new RekindleError(
      "UNREACHABLE",
      `cannot read the fault journal of the cluster in ${source}: ${errorMessage(error)}`,
      {
        hint:
          "is the cluster up, and may this kubeconfig list ConfigMaps in namespace " +
          JOURNAL_NAMESPACE +
          "?",
        cause: error,
      },
    );
  }
  for (const line of reapLines(report)) process.stdout.write(`${line}\n`);
  try {
    for (const name of await deleteRunNamespaces(kc, deadExistingRuns(report)))
      process.stdout.write(`  deleted namespace ${name}, left by the dead run\n`);
  } catch (error) {
    process.stdout.write(`  FAILED to delete the dead runs' namespaces: ${errorMessage(error)}\n`);
    return EXIT_CODES.infrastructure;
  }
  return reapExitCode(report);
}
