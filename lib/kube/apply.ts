// Applies multi-document YAML (fixtures) with server-side apply, labelling every object with the run id.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { isNotFound, k8s } from "./client.js";
import { RekindleError } from "../errors.js";

export const RUN_LABEL = "rekindle.dev/run";
export const FIELD_MANAGER = "rekindle";

export function parseManifests(text: string, source: string): k8s.KubernetesObject[] {
  const objects: k8s.KubernetesObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) {
      throw new RekindleError(
        "INVALID_INPUT",
        `${source} is not valid YAML: ${doc.errors[0]?.message ?? "parse error"}`,
      );
    }
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    const object = value as k8s.KubernetesObject;
    if (typeof object.kind !== "string" || typeof object.apiVersion !== "string") {
      throw new RekindleError("INVALID_INPUT", `${source} holds a document without apiVersion and kind`);
    }
    objects.push(object);
  }
  return objects;
}

export interface ApplyOptions {
  /** Added to every object's labels (the run label, typically). */
  labels?: Record<string, string>;
  /** Replaces @KEY@ placeholders in the text before parsing. */
  substitutions?: Record<string, string>;
  /** Server-side dry run: the API server validates and admits each object but stores nothing. Default false. */
  dryRun?: boolean;
}

export function substitute(text: string, substitutions: Record<string, string> = {}): string {
  return text.replace(/@([A-Z_]+)@/g, (match, key: string) => substitutions[key] ?? match);
}

export async function applyManifests(
  kc: k8s.KubeConfig,
  objects: k8s.KubernetesObject[],
  options: ApplyOptions = {},
): Promise<k8s.KubernetesObject[]> {
  const client = k8s.KubernetesObjectApi.makeApiClient(kc);
  const applied: k8s.KubernetesObject[] = [];
  for (const object of objects) {
    const labelled: k8s.KubernetesObject = {
      ...object,
      metadata: { ...object.metadata, labels: { ...object.metadata?.labels, ...options.labels } },
    };
    try {
      applied.push(
        await client.patch(
          labelled,
          undefined,
          options.dryRun === true ? "All" : undefined,
          FIELD_MANAGER,
          true,
          k8s.PatchStrategy.ServerSideApply,
        ),
      );
    } catch (error) {
      const name = `${String(object.kind)}/${object.metadata?.name ?? "?"}`;
      throw new RekindleError(
        "COMMAND_FAILED",
        `applying ${name} failed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }
  return applied;
}

export async function applyManifestFile(
  kc: k8s.KubeConfig,
  path: string,
  options: ApplyOptions = {},
): Promise<k8s.KubernetesObject[]> {
  const text = substitute(readFileSync(path, "utf8"), options.substitutions);
  return applyManifests(kc, parseManifests(text, path), options);
}

/** Deletes these objects (last first, as they were applied first to last); one already gone is fine. */
export async function deleteManifests(
  kc: k8s.KubeConfig,
  objects: readonly k8s.KubernetesObject[],
): Promise<void> {
  const client = k8s.KubernetesObjectApi.makeApiClient(kc);
  for (const object of [...objects].reverse()) {
    try {
      await client.delete(object);
    } catch (error) {
      if (isNotFound(error)) continue;
      const name = `${String(object.kind)}/${object.metadata?.name ?? "?"}`;
      throw new RekindleError(
        "COMMAND_FAILED",
        `deleting ${name} failed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }
}
