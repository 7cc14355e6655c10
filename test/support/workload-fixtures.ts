// The fixture workloads' manifests as the workload model reads them: parsed, placeholders filled.
import { readFileSync } from "node:fs";
import { parseManifests, substitute } from "../../lib/kube/apply.js";
import type { KubeObject } from "../../lib/expect/workload-facts.js";
import { deployPath } from "../../lib/util/project-files.js";

/** A fixture's objects, its @KEY@ placeholders filled in (one replica, a CSI storage class). */
export function fixtureObjects(file: string): KubeObject[] {
  const path = deployPath("workloads", file);
  const text = substitute(readFileSync(path, "utf8"), {
    NAMESPACE: "ns",
    REPLICAS: "1",
    STORAGE_CLASS: "csi",
    NODE: "worker",
  });
  return parseManifests(text, path);
}
