// `rekindle sim …`: build the sim binaries, run a sim cluster in the background for local
// reproduction, and inject faults into it (sim-fault-commands.ts).
import { parseOptions } from "../util/parse-options.js";
import { ensureSimBinaries, simBuildStatus } from "../build/sim-binaries.js";
import { SimCluster } from "../cluster/sim/cluster.js";
import { formatOffset } from "../cluster/sim/hostile/clock-webhook.js";
import { SIM_MAX_WORKERS } from "../cluster/sim/boot/addresses.js";
import {
  SIM_DEDICATED_UP_TO,
  SIM_DEFAULT_DEDICATED_AT_SCALE,
  SIM_MAX_PODS_PER_NODE,
  SIM_MAX_ZONES,
} from "../cluster/sim/boot/options.js";
import { TIMING_PROFILE_NAMES, timingProfile } from "../cluster/profiles.js";
import { consoleProgress } from "../util/progress.js";
import { OUTPUT_OPTION, OUTPUT_USAGE, outputFormat, writeJson } from "./args.js";
import { notice } from "./notice.js";
import { simSizeFlags } from "../cluster/sim/boot/size-flags.js";
import { SIM_APISERVER_USAGE, SIM_NODE_USAGE } from "./sim-fault-commands.js";

export const SIM_BUILD_USAGE = `rekindle sim build [--check] ${OUTPUT_USAGE}
      build (or with --check only report) the pinned sim binaries (-o json: {versions}; --check:
      {components: [{component, version, cached, dir}]})`;
export const SIM_UP_USAGE = `rekindle sim up [--workers N] [--zones Z] [--pods-per-node P] [--own-kwoks K] [--profile ${TIMING_PROFILE_NAMES.join("|")}] [--name X] ${OUTPUT_USAGE}
      start a sim cluster in the background; prints its kubeconfig (-o json: {provider, name,
      kubeconfig, status}, status as rekindle sim status -o json prints it)
      --workers 1..${SIM_MAX_WORKERS}, --zones 1..${SIM_MAX_ZONES} (at most --workers); past ${SIM_DEDICATED_UP_TO} workers the first
      --own-kwoks (default ${SIM_DEFAULT_DEDICATED_AT_SCALE}) run their own kwok, the rest share one kwok per zone;
      --pods-per-node 0..${SIM_MAX_PODS_PER_NODE} filler pods on each shared-kwok worker (use profile large past ~300 workers)
      defaults: --name rekindle, --workers 3, --zones 2, --pods-per-node 0, --profile default`;
export const SIM_STATUS_USAGE = `rekindle sim status [--name X] ${OUTPUT_USAGE}
      components and nodes of a running sim cluster (--json is -o json); default --name rekindle`;
export const SIM_DOWN_USAGE = `rekindle sim down [--name X] [--keep-files] ${OUTPUT_USAGE}
      stop every process of the cluster; default --name rekindle; -o json: {provider, name, logsDir}`;

export const SIM_USAGE = `rekindle sim <command>: a local sim cluster (real control plane, KWOK workers)

${[SIM_BUILD_USAGE, SIM_UP_USAGE, SIM_STATUS_USAGE, SIM_DOWN_USAGE, SIM_NODE_USAGE, SIM_APISERVER_USAGE].join("\n")}`;

export async function simBuild(args: string[], signal: AbortSignal): Promise<number> {
  const { values } = parseOptions({
    args,
    options: { check: { type: "boolean", default: false }, ...OUTPUT_OPTION },
    strict: true,
  });
  const format = outputFormat(values.output);
  if (values.check) {
    const status = simBuildStatus();
    if (format === "json") writeJson({ components: status });
    else
      for (const s of status)
        process.stdout.write(
          `${s.component} ${s.version}: ${s.cached ? "cached" : "not built"} (${s.dir})\n`,
        );
    return status.every((s) => s.cached) ? 0 : 1;
  }
  const binaries = await ensureSimBinaries({ progress: consoleProgress(), signal });
  if (format === "json") writeJson({ versions: binaries.versions });
  else
    process.stdout.write(
      `sim binaries ready: kubernetes ${binaries.versions.kubernetes}, etcd ${binaries.versions.etcd}, kwok ${binaries.versions.kwok}\n`,
    );
  return 0;
}

export async function simUp(args: string[], signal: AbortSignal): Promise<number> {
  const { values } = parseOptions({
    args,
    options: {
      workers: { type: "string" },
      zones: { type: "string" },
      "pods-per-node": { type: "string" },
      "own-kwoks": { type: "string" },
      profile: { type: "string" },
      name: { type: "string" },
      root: { type: "string" },
      ...OUTPUT_OPTION,
    },
    strict: true,
  });
  const format = outputFormat(values.output);
  const cluster = await SimCluster.start({
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...simSizeFlags(values),
    ...(values.profile !== undefined ? { profile: timingProfile(values.profile) } : {}),
    ...(values.root !== undefined ? { root: values.root } : {}),
    detach: true,
    progress: consoleProgress(),
    signal,
  });
  const status = cluster.status();
  notice(
    `sim cluster "${status.name}" is running (profile ${status.profile}, nodes ${nodesLine(status.nodes)}).\n` +
      `  kubectl --kubeconfig ${status.kubeconfig} get nodes\n` +
      `  rekindle sim node stop ${status.nodes[0]?.name ?? "worker-1"}${status.name === "rekindle" ? "" : ` --name ${status.name}`}\n` +
      `  rekindle sim down${status.name === "rekindle" ? "" : ` --name ${status.name}`}`,
  );
  // stdout carries only the kubeconfig path, so `export KUBECONFIG=$(rekindle sim up)` works.
  if (format === "json")
    writeJson({ provider: "sim", name: status.name, kubeconfig: status.kubeconfig, status });
  else process.stdout.write(`${status.kubeconfig}\n`);
  return 0;
}

/** Every node of a small cluster; the first ten and a count of a large one. */
function nodesLine(nodes: readonly { name: string; zone: string }[]): string {
  const shown = nodes.slice(0, 10).map((n) => `${n.name}/${n.zone}`);
  return nodes.length > 10 ? `${shown.join(", ")} and ${nodes.length - 10} more` : shown.join(", ");
}

const NAME_OPTION = { name: { type: "string", default: "rekindle" } } as const;

export async function simDown(args: string[]): Promise<number> {
  const { values } = parseOptions({
    args,
    options: { ...NAME_OPTION, "keep-files": { type: "boolean", default: false }, ...OUTPUT_OPTION },
    strict: true,
  });
  const format = outputFormat(values.output);
  const cluster = SimCluster.open(values.name, consoleProgress());
  await cluster.destroy({ keepFiles: values["keep-files"] });
  notice(`sim cluster "${cluster.name}" stopped; logs kept in ${cluster.layout.logsDir}`);
  if (format === "json") writeJson({ provider: "sim", name: cluster.name, logsDir: cluster.layout.logsDir });
  return 0;
}

export function simStatus(args: string[]): number {
  const { values } = parseOptions({
    args,
    options: { ...NAME_OPTION, ...OUTPUT_OPTION, json: { type: "boolean", default: false } },
    strict: true,
  });
  const format = outputFormat(values.output, values.json);
  const status = SimCluster.open(values.name).status();
  if (format === "json") {
    writeJson(status);
  } else {
    process.stdout.write(
      `cluster ${status.name} (run ${status.runId}, profile ${status.profile}) at ${status.apiserverUrl}\n`,
    );
    process.stdout.write(`kubeconfig: ${status.kubeconfig}\n`);
    for (const c of [...status.components, ...(status.kwokGroups ?? [])])
      process.stdout.write(
        `  ${c.name.padEnd(24)} pid ${String(c.pid).padEnd(8)} ${c.running ? "running" : "NOT RUNNING"}\n`,
      );
    if (status.apiserverPausedUntil !== undefined)
      process.stdout.write(`  kube-apiserver PAUSED (SIGSTOP) until ${status.apiserverPausedUntil}\n`);
    for (const n of status.nodes) {
      const consistent = (n.power === "stopped") !== n.processRunning;
      const clock = n.clock
        ? `, clock ${formatOffset(n.clock.offsetMs)}${n.clock.step ? " (stepped)" : ""}`
        : "";
      process.stdout.write(
        `  node ${n.name.padEnd(19)} ${n.zone.padEnd(8)} ${n.power}${clock}${consistent ? "" : " (process state differs!)"}\n`,
      );
    }
  }
  const allUp = status.components.length > 0 && status.components.every((c) => c.running);
  return allUp ? 0 : 1;
}
