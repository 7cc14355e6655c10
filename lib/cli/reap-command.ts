// `rekindle reap`: reverts what runs that died (SIGKILL, OOM, a closed laptop) left faulted, from
// the fault journal in the cluster, and removes their records.
import { parseOptions } from "../util/parse-options.js";
import { errorMessage, RekindleError } from "../errors.js";
import { deadExistingRuns, deleteRunNamespaces } from "../fault/dead-run-namespaces.js";
import { ConfigMapJournal } from "../fault/journal.js";
import { JOURNAL_NAMESPACE } from "../fault/record-codec.js";
import { reapFaults, reapLines, type ReapReport } from "../fault/reaper.js";
import { loadKubeconfig } from "../kube/kubeconfig-load.js";
import { consoleProgress } from "../util/progress.js";
import { OUTPUT_OPTION, OUTPUT_USAGE, outputFormat, writeJson } from "./args.js";
import { EXIT_CODES } from "./exit-codes.js";
import { reapReportJson } from "./fault-json.js";

export const REAP_USAGE = `rekindle reap [--kubeconfig K] [--context C] [--run-id R] ${OUTPUT_USAGE}
      revert every node fault the cluster's fault journal (ConfigMaps in namespace ${JOURNAL_NAMESPACE})
      still holds from a run that is gone, and remove its record; --run-id: only that run's.
      On a cluster rekindle did not create, the namespaces of such a run's scenarios go too.
      A fault whose run still runs on this machine is left to it; one held by a run on another
      machine is left until its deadline unless --run-id names that run.
      Kubeconfig as kubectl picks it (default $KUBECONFIG, else ~/.kube/config; its current context).
      -o json: {faults: [{id, runId, action, nodes, appliedAt, deadline, outcome, reason?}],
      unreadable: [{name, reason}], deletedNamespaces, namespaceError?} instead of the lines.
      Exit 0: nothing was left, or all of it reverted; 1: some left to a run still going;
      3: a revert failed, a record was unreadable, or the cluster did not answer`;

const OPTIONS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
  "run-id": { type: "string" },
  ...OUTPUT_OPTION,
} as const;

/** 0 clean, 1 something left to a live run, 3 a failure or an unreadable record. */
export function reapExitCode(report: ReapReport): number {
  if (report.unreadable.length > 0 || report.entries.some((e) => e.outcome === "failed"))
    return EXIT_CODES.infrastructure;
  if (report.entries.some((e) => e.outcome !== "reverted")) return EXIT_CODES.failed;
  return EXIT_CODES.passed;
}

export async function reapCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseOptions({
    args,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) {
    throw new RekindleError(
      "INVALID_INPUT",
      `rekindle reap takes no arguments, got ${positionals.join(" ")}`,
      {
        hint: "it takes --kubeconfig, --context, --run-id and -o",
      },
    );
  }
  const format = outputFormat(values.output);
  const runId = values["run-id"];
  if (runId === "")
    throw new RekindleError("INVALID_INPUT", "--run-id is empty", {
      hint: "e.g. --run-id 20261124-100000-ab12",
    });
  const { kc, source } = loadKubeconfig({
    ...(values.kubeconfig !== undefined ? { path: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
  });
  const progress = consoleProgress();
  progress.detail?.(
    `fault journal: ConfigMaps in namespace ${JOURNAL_NAMESPACE} of the cluster in ${source}`,
  );
  const journal = ConfigMapJournal.forCluster(kc);
  let report: ReapReport;
  try {
    report = await reapFaults({
      journal,
      kubeConfig: kc,
      ...(runId !== undefined ? { runId } : {}),
      progress,
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
  const text = format === "text";
  if (text) for (const line of reapLines(report)) process.stdout.write(`${line}\n`);
  let deleted: string[] = [];
  let namespaceError: string | undefined;
  try {
    deleted = await deleteRunNamespaces(kc, deadExistingRuns(report));
  } catch (error) {
    namespaceError = errorMessage(error);
  }
  if (text) {
    for (const name of deleted) process.stdout.write(`  deleted namespace ${name}, left by the dead run\n`);
    if (namespaceError !== undefined)
      process.stdout.write(`  FAILED to delete the dead runs' namespaces: ${namespaceError}\n`);
  } else {
    writeJson({
      ...reapReportJson(report),
      deletedNamespaces: deleted,
      ...(namespaceError !== undefined ? { namespaceError } : {}),
    });
  }
  return namespaceError !== undefined ? EXIT_CODES.infrastructure : reapExitCode(report);
}
