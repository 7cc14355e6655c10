// A scenario file's workloads as Kubernetes objects: manifest files and directories read and
// parsed, kustomize directories built with kubectl. Read once, before any cluster exists, so
// `rekindle list -f` derives the same windows `rekindle run -f` checks.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../errors.js";
import { parseManifests } from "../kube/apply.js";
import type { k8s } from "../kube/client.js";
import { runCommand } from "../util/command.js";
import { defaultKubectl } from "../util/paths.js";
import type { ScenarioFile, WorkloadSpec } from "./types.js";

const MANIFEST_EXTENSIONS = [".yaml", ".yml", ".json"];

/** Kinds that live outside any namespace: applied as they are and deleted again by the undo. */
export const CLUSTER_SCOPED_KINDS = new Set([
  "PriorityClass",
  "StorageClass",
  "PersistentVolume",
  "ClusterRole",
  "ClusterRoleBinding",
  "CustomResourceDefinition",
]);

/** Kinds a workload may not bring: they would outlive or escape the scenario. */
const REFUSED_KINDS = new Set([
  "Namespace",
  "Node",
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration",
]);

export interface WorkloadObjects {
  workload: WorkloadSpec;
  /** Every object of its manifests, in file order. */
  objects: k8s.KubernetesObject[];
}

function manifestFilesOf(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  const files = readdirSync(path)
    .filter((name) => MANIFEST_EXTENSIONS.some((ext) => name.endsWith(ext)))
    .sort()
    .map((name) => join(path, name));
  if (files.length === 0) {
    throw new RekindleError("INVALID_INPUT", `manifest directory ${path} holds no manifest`, {
      hint: `put *.yaml, *.yml or *.json files in it (${MANIFEST_EXTENSIONS.join(", ")})`,
    });
  }
  return files;
}

async function kustomizeBuild(dir: string, kubectl: string | undefined): Promise<k8s.KubernetesObject[]> {
  if (kubectl === undefined) {
    throw new RekindleError("PRECONDITION", `building the kustomize directory ${dir} needs kubectl`, {
      hint: "put kubectl on PATH or name it with REKINDLE_KUBECTL (the sim provider builds one: run with --provider sim)",
    });
  }
  const result = await runCommand(kubectl, ["kustomize", dir], { timeoutMs: 60_000 });
  return parseManifests(result.stdout, `kubectl kustomize ${dir}`);
}

function checkKinds(
  file: ScenarioFile,
  workload: WorkloadSpec,
  objects: readonly k8s.KubernetesObject[],
): void {
  for (const object of objects) {
    const kind = String(object.kind);
    if (REFUSED_KINDS.has(kind)) {
      throw new RekindleError(
        "INVALID_INPUT",
        `${file.path}: workload ${workload.name} brings a ${kind} (${object.metadata?.name ?? "?"}), which a scenario may not create`,
        { hint: "a scenario's objects go into its own namespace; leave Namespaces, Nodes and webhooks out" },
      );
    }
  }
}

/**
 * The objects of every workload of the file that rekindle deploys (`deployed` workloads have none).
 * `kubectl`: for kustomize directories; default $REKINDLE_KUBECTL or kubectl on PATH.
 */
export async function readWorkloadObjects(
  file: ScenarioFile,
  kubectl: string | undefined = defaultKubectl(),
): Promise<WorkloadObjects[]> {
  const out: WorkloadObjects[] = [];
  for (const workload of file.workloads) {
    const source = workload.source;
    let objects: k8s.KubernetesObject[];
    switch (source.kind) {
      case "manifests":
        objects = source.paths
          .flatMap(manifestFilesOf)
          .flatMap((path) => parseManifests(readFileSync(path, "utf8"), path));
        break;
      case "kustomize":
        objects = await kustomizeBuild(source.path, kubectl);
        break;
      case "deployed":
        objects = [];
        break;
    }
    checkKinds(file, workload, objects);
    out.push({ workload, objects });
  }
  return out;
}

/** The object placed for the scenario: namespaced ones into its namespace, cluster-scoped as written. */
export function placed(object: k8s.KubernetesObject, namespace: string): k8s.KubernetesObject {
  if (CLUSTER_SCOPED_KINDS.has(String(object.kind))) return object;
  return { ...object, metadata: { ...object.metadata, namespace } };
}
