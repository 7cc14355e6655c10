// The kwok Stage files of a cluster: node and pod lifecycle for the workers, attach for the
// attacher, from deploy/sim/kwok with this cluster's versions and latencies filled in.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { substitute } from "../../../kube/apply.js";
import { deployPath } from "../../../util/project-files.js";
import type { SimLayout } from "../boot/layout.js";
import { SIM_CSI_DRIVER } from "./storage.js";
import type { SimVersions } from "../../../build/versions.js";

export interface KwokStageFiles {
  /** node-stages.yaml and pod-stages.yaml together: what each worker's kwok plays. */
  nodeStages: string;
  attacherStages: string;
}

export function kwokStageFiles(layout: SimLayout): KwokStageFiles {
  return {
    nodeStages: join(layout.kwokDir, "node-stages.yaml"),
    attacherStages: join(layout.kwokDir, "attacher-stages.yaml"),
  };
}

function fixture(name: string, substitutions: Record<string, string>): string {
  return substitute(readFileSync(deployPath("sim", "kwok", name), "utf8"), substitutions);
}

export function writeKwokStages(
  files: KwokStageFiles,
  versions: SimVersions,
  latencies: { podStartMs: number; podStartSpreadMs: number; attachMs: number },
): void {
  const substitutions = {
    KUBELET_VERSION: versions.kubernetes,
    KWOK_VERSION: versions.kwok,
    POD_START_MS: String(latencies.podStartMs),
    POD_START_MAX_MS: String(latencies.podStartMs + latencies.podStartSpreadMs),
    ATTACH_MS: String(latencies.attachMs),
    CSI_DRIVER: SIM_CSI_DRIVER,
  };
  writeFileSync(
    files.nodeStages,
    ["node-stages.yaml", "pod-stages.yaml"].map((f) => fixture(f, substitutions)).join("\n---\n"),
  );
  writeFileSync(files.attacherStages, fixture("attacher-stages.yaml", substitutions));
}
