// `rekindle up` and `rekindle down` on every provider: a sim cluster in the background (as `rekindle
// sim up|down`), a kind cluster kept running, or an existing cluster (nothing to bring up: it is
// checked and described; `down` ends the faults rekindle left there and leaves the cluster).
import { parseOptions } from "../util/parse-options.js";
import { chooseProvider } from "../cluster/create.js";
import { deleteKindCluster } from "../cluster/kind/attach.js";
import { startKindCluster } from "../cluster/kind/start.js";
import { TIMING_PROFILE_NAMES, timingProfile } from "../cluster/profiles.js";
import { RekindleError } from "../errors.js";
import { ConfigMapJournal } from "../fault/journal.js";
import { reapFaults, reapLines, type ReapReport } from "../fault/reaper.js";
import { consoleProgress } from "../util/progress.js";
import { OUTPUT_OPTION, OUTPUT_USAGE, outputFormat, writeJson } from "./args.js";
import { reapReportJson } from "./fault-json.js";
import { notice } from "./notice.js";
import { reapExitCode } from "./reap-command.js";
import { simDown, simUp } from "./sim-commands.js";
import { openVerbCluster, VERB_CLUSTER_OPTIONS, VERB_CLUSTER_USAGE } from "./verb-cluster.js";

export const UP_USAGE = `rekindle up [--provider sim|kind|existing] [--name X] [--profile ${TIMING_PROFILE_NAMES.join("|")}] [--workers N] [--zones Z] [--pods-per-node P] [--own-kwoks K] [--image REF] ${OUTPUT_USAGE}
      bring a cluster up for local reproduction and leave it running; prints its kubeconfig path
      (-o json: {provider, name, kubeconfig} and, sim, its status; existing: {provider, cluster, workers})
      sim: as rekindle sim up (--workers 1..1000, --zones, --pods-per-node, --own-kwoks); kind: created, or reused when it runs (--image as
      rekindle run's); existing: nothing is started: the cluster is checked and its nodes listed
      ${VERB_CLUSTER_USAGE}`;

export const DOWN_USAGE = `rekindle down [--provider sim|kind|existing] [--name X] [--kubeconfig K] [--context C] ${OUTPUT_USAGE}
      take the cluster rekindle up brought up down (sim: its processes; kind: kind delete cluster);
      existing: the cluster stays; the faults rekindle's journal holds there are reverted as rekindle
      reap reverts them, and the verbs' faults before their deadline too; exit code as reap's
      -o json: {provider, name} (sim: and logsDir; existing: {provider, cluster, faults, unreadable}
      as rekindle reap -o json)`;

const UP_OPTIONS = {
  ...VERB_CLUSTER_OPTIONS,
  profile: { type: "string" },
  workers: { type: "string" },
  zones: { type: "string" },
  "pods-per-node": { type: "string" },
  "own-kwoks": { type: "string" },
  image: { type: "string" },
  ...OUTPUT_OPTION,
} as const;

/** Drops --provider X from args (the sim commands do not take it). */
function withoutProvider(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "--provider") i++;
    else if (!arg.startsWith("--provider=")) out.push(arg);
  }
  return out;
}

function only(provider: string, given: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.entries(given)
    .filter(
      ([flag, value]) =>
        value !== undefined && !["provider", "name", "output"].includes(flag) && !allowed.includes(flag),
    )
    .map(([flag]) => `--${flag}`);
  if (extra.length > 0)
    throw new RekindleError("INVALID_INPUT", `${extra.join(", ")} is not for --provider ${provider}`, {
      hint: "see rekindle up --help",
    });
}

export async function upCommand(args: string[], signal: AbortSignal): Promise<number> {
  const { values } = parseOptions({ args, options: UP_OPTIONS, strict: true });
  const format = outputFormat(values.output);
  const progress = consoleProgress();
  if (values.profile !== undefined) timingProfile(values.profile);
  const provider = await chooseProvider(values.provider, progress);
  switch (provider) {
    case "sim":
      only(provider, values, ["profile", "workers", "zones", "pods-per-node", "own-kwoks"]);
      return simUp(withoutProvider(args), signal);
    case "kind": {
      only(provider, values, ["profile", "image"]);
      const cluster = await startKindCluster({
        name: values.name,
        keep: true,
        sharedStorage: false,
        ...(values.profile !== undefined ? { profile: timingProfile(values.profile) } : {}),
        ...(values.image !== undefined ? { image: values.image } : {}),
        progress,
        signal,
      });
      await cluster.destroy(); // kept: says how to reach it
      if (format === "json")
        writeJson({ provider, name: values.name, kubeconfig: cluster.kubeconfigPath ?? null });
      else process.stdout.write(`${cluster.kubeconfigPath ?? ""}\n`);
      return 0;
    }
    case "existing": {
      only(provider, values, ["kubeconfig", "context"]);
      const cluster = await openVerbCluster(provider, values, { progress, signal });
      const workers = await cluster.workerNodes();
      notice(
        `${cluster.description} answers; rekindle did not create it and starts nothing there. Workers: ${workers.join(", ")}`,
      );
      if (format === "json") writeJson({ provider, cluster: cluster.description, workers });
      return 0;
    }
  }
}

export async function downCommand(args: string[], signal: AbortSignal): Promise<number> {
  const { values } = parseOptions({
    args,
    options: { ...VERB_CLUSTER_OPTIONS, "keep-files": { type: "boolean" }, ...OUTPUT_OPTION },
    strict: true,
  });
  const format = outputFormat(values.output);
  const progress = consoleProgress();
  const provider = await chooseProvider(values.provider, progress);
  switch (provider) {
    case "sim":
      only(provider, values, ["keep-files"]);
      return simDown(withoutProvider(args));
    case "kind":
      only(provider, values, []);
      await deleteKindCluster(values.name, { progress, signal });
      notice(`kind cluster ${values.name} deleted`);
      if (format === "json") writeJson({ provider, name: values.name });
      return 0;
    case "existing": {
      only(provider, values, ["kubeconfig", "context"]);
      const cluster = await openVerbCluster(provider, values, { progress, signal });
      const journal = ConfigMapJournal.forCluster(cluster.kubeConfig());
      // What dead runs left, then the verbs' faults (held until their deadline unless their run is
      // named). Another machine's run keeps its faults until its deadline, as with reap.
      const verbs = (await journal.list()).records.filter((r) => r.holder.command !== undefined);
      const report: ReapReport = await reapFaults({ journal, progress });
      report.entries = report.entries.filter((e) => e.record.holder.command === undefined);
      for (const runId of new Set(verbs.map((r) => r.runId)))
        report.entries.push(...(await reapFaults({ journal, runId, progress })).entries);
      if (format === "json") writeJson({ provider, cluster: cluster.description, ...reapReportJson(report) });
      else for (const line of reapLines(report)) process.stdout.write(`${line}\n`);
      notice(`${cluster.description} stays up (rekindle did not create it)`);
      return reapExitCode(report);
    }
  }
}
