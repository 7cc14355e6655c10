// The checks a schema cannot express, run on the loaded file: names that must refer to a workload,
// keys that depend on the fault type or the target, counts that depend on each other, paths that
// must exist, and (when the file names its provider) what that provider cannot do.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { pointerLabel, positionOf, type DocumentPositions } from "./positions.js";
import type { Problem } from "./problems.js";
import { providerRefusals } from "./provider-refusal.js";
import type { RawScenario } from "./raw.js";
import { BUDGET_KINDS } from "../expect/budgets.js";
import type { FaultType, ScenarioFile } from "./types.js";

/** Fault types that last a `duration`, then are lifted. */
export const TIMED_FAULTS: readonly FaultType[] = ["partition", "memory-pressure", "disk-pressure"];
/** Worker count when the file gives none (the providers' default). */
export const DEFAULT_WORKERS = 3;
/** A budget's objectives are the kinds the checker knows. */
const BUDGET_OBJECTIVES = BUDGET_KINDS;
const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

type Report = (pointer: string, message: string, atKey?: boolean) => void;

/** Every problem of `file` the schema let through; empty when it can be run. */
export function semanticProblems(
  file: ScenarioFile,
  raw: RawScenario,
  positions: DocumentPositions,
): Problem[] {
  const problems: Problem[] = [];
  const report: Report = (pointer, message, atKey = false) => {
    problems.push({ position: positionOf(positions, pointer, atKey), message });
  };
  checkNames(file, report);
  checkFault(file, report);
  checkCluster(file, report);
  checkPaths(file, raw, report);
  if (file.cluster.provider !== undefined) {
    for (const refusal of providerRefusals(file, file.cluster.provider)) {
      report(refusal.pointer, `spec.cluster.provider is ${file.cluster.provider}, but ${refusal.reason}`);
    }
  }
  return problems;
}

function checkNames(file: ScenarioFile, report: Report): void {
  const names = file.workloads.map((w) => w.name);
  names.forEach((name, index) => {
    const first = names.indexOf(name);
    if (first !== index)
      report(
        `/spec/workloads/${index}/name`,
        `spec.workloads[${index}].name ${JSON.stringify(name)} is also spec.workloads[${first}]'s; workload names are unique in a file`,
      );
  });
  const unique = [...new Set(names)].join(", ");
  const { target } = file.fault;
  if (target.kind === "workload" && !names.includes(target.workload)) {
    report(
      "/spec/fault/target/workload",
      `spec.fault.target.workload ${JSON.stringify(target.workload)} names no workload of this file; valid: ${unique}`,
    );
  }
  file.budgets.forEach((budget, index) => {
    const pointer = `/spec/budgets/${index}`;
    if (!names.includes(budget.workload)) {
      report(
        `${pointer}/workload`,
        `spec.budgets[${index}].workload ${JSON.stringify(budget.workload)} names no workload of this file; valid: ${unique}`,
      );
    }
    const objectives = Object.keys(budget).filter((key) => key !== "workload");
    if (objectives.length === 0) {
      report(
        pointer,
        `spec.budgets[${index}]: no objective; give at least one of ${BUDGET_OBJECTIVES.join(", ")}`,
      );
    }
  });
}

function checkFault(file: ScenarioFile, report: Report): void {
  const { fault } = file;
  const timed = TIMED_FAULTS.includes(fault.type);
  if (timed && fault.durationMs === undefined) {
    report(
      "/spec/fault",
      `spec.fault: a ${fault.type} fault needs a duration (how long it lasts before it is lifted), e.g. duration: 30s`,
      true,
    );
  }
  if (!timed && fault.durationMs !== undefined) {
    report(
      "/spec/fault/duration",
      `spec.fault.duration: a ${fault.type} fault takes no duration; duration is for ${TIMED_FAULTS.join(", ")}`,
      true,
    );
  }
  if (fault.operator !== undefined && fault.type !== "stop") {
    report(
      "/spec/fault/operator",
      `spec.fault.operator: an operator's action follows a stop fault only, not ${fault.type}`,
      true,
    );
  }
  if (fault.staggerMs !== undefined) {
    const { target } = fault;
    const single =
      target.kind === "workload"
        ? "target.workload selects one node"
        : target.kind === "zone" && target.count === 1
          ? "target.count is 1"
          : undefined;
    if (single !== undefined) {
      report(
        "/spec/fault/stagger",
        `spec.fault.stagger: ${single}; stagger needs a target that can select several nodes (matchLabels, or zone with count above 1)`,
        true,
      );
    }
  }
}

function checkCluster(file: ScenarioFile, report: Report): void {
  const { workers, zones } = file.cluster;
  const workerCount = workers ?? DEFAULT_WORKERS;
  if (zones !== undefined && zones > workerCount) {
    const whose =
      workers === undefined ? `the default ${DEFAULT_WORKERS} workers` : `spec.cluster.workers ${workers}`;
    report(
      "/spec/cluster/zones",
      `spec.cluster.zones ${zones}: more zones than workers (${whose}); valid: 1 to ${workerCount}`,
    );
  }
}

/** One path the file names: where it is written, as written, resolved, and what it must be. */
interface NamedPath {
  pointer: string;
  written: string;
  resolved: string;
  kind: "file" | "file or directory" | "kustomize directory";
}

function namedPaths(file: ScenarioFile, raw: RawScenario): NamedPath[] {
  const paths: NamedPath[] = [];
  file.workloads.forEach((workload, index) => {
    const rawWorkload = raw.spec.workloads[index];
    const { source } = workload;
    if (source.kind === "manifests") {
      source.paths.forEach((resolved, entry) => {
        const written = rawWorkload?.manifests?.[entry] ?? resolved;
        const pointer = `/spec/workloads/${index}/manifests/${entry}`;
        paths.push({ pointer, written, resolved, kind: "file or directory" });
      });
    } else if (source.kind === "kustomize") {
      const written = rawWorkload?.kustomize ?? source.path;
      paths.push({
        pointer: `/spec/workloads/${index}/kustomize`,
        written,
        resolved: source.path,
        kind: "kustomize directory",
      });
    }
  });
  // The single files the file names: the kind config and the fence config.
  const files = [
    ["/spec/cluster/kindConfig", file.cluster.kindConfig, raw.spec.cluster?.kindConfig],
    ["/spec/controller/fenceConfig", file.controller.fenceConfig, raw.spec.controller?.fenceConfig],
  ] as const;
  for (const [pointer, resolved, written] of files) {
    if (resolved !== undefined) paths.push({ pointer, written: written ?? resolved, resolved, kind: "file" });
  }
  return paths;
}

function checkPaths(file: ScenarioFile, raw: RawScenario, report: Report): void {
  for (const path of namedPaths(file, raw)) {
    const problem = pathProblem(path);
    if (problem !== undefined)
      report(path.pointer, `${pointerLabel(path.pointer)} ${JSON.stringify(path.written)}: ${problem}`);
  }
}

/** What is wrong with the path, or undefined when it is what it must be. */
function pathProblem(path: NamedPath): string | undefined {
  if (!existsSync(path.resolved))
    return `${path.resolved} does not exist (paths are relative to the scenario file)`;
  const isDirectory = statSync(path.resolved).isDirectory();
  switch (path.kind) {
    case "file":
      return isDirectory ? `${path.resolved} is a directory; expected a file` : undefined;
    case "file or directory":
      return undefined;
    case "kustomize directory":
      if (!isDirectory) return `${path.resolved} is a file; expected a kustomize directory`;
      return KUSTOMIZATION_FILES.some((name) => existsSync(join(path.resolved, name)))
        ? undefined
        : `${path.resolved} holds no ${KUSTOMIZATION_FILES.join(", ")}; expected a kustomize directory`;
  }
}
