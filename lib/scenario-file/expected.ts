// A scenario file's expected timeline: the node's windows once, then each workload's from its own
// spec (lib/expect/workload-facts.ts, workload-model.ts), for the pods the fault took from it.
// Before a run the reach is assumed (each workload loses one pod); a run passes what it saw.
import { knobs, type ExpectedMilestone } from "../expect/model.js";
import type { ScenarioSituation } from "../expect/node-windows.js";
import { tolerationDefaults, workloadFacts, type WorkloadFacts } from "../expect/workload-facts.js";
import { expectedScenarioWindows } from "../expect/workload-model.js";
import { controllerTiming, nodeLossModelInputs } from "../scenario/common.js";
import type { StorageClassInfo } from "../kube/storage-classes.js";
import type { ExpectationInputs } from "../scenario/harness.js";
import type { WorkloadObjects } from "./manifests.js";
import type { ScenarioFile } from "./types.js";

export interface FileWorkloadFacts extends WorkloadFacts {
  /** Pods Ready before the fault; null: a DaemonSet (every node it is scheduled to). */
  readyReplicas: number | null;
}

/** How many pods the fault took from each workload, by id; "assumed": one each (before a run). */
export type LostPods = ReadonlyMap<string, number> | "assumed";

/**
 * Facts of every workload rekindle deploys, with the cluster's default tolerations and its
 * StorageClasses (`storageClasses`, read from the cluster before the run; none before any cluster
 * exists, when only the manifests' own classes are known).
 */
export function fileWorkloadFacts(
  workloads: readonly WorkloadObjects[],
  inputs: Pick<ExpectationInputs, "profile" | "volumeAttachRequired">,
  storageClasses: readonly StorageClassInfo[] = [],
): FileWorkloadFacts[] {
  return workloads
    .filter(({ workload }) => workload.source.kind !== "deployed")
    .map(({ workload, objects }) => {
      const facts = workloadFacts(workload.name, objects, {
        ...tolerationDefaults(inputs.profile),
        volumeAttachRequired: inputs.volumeAttachRequired,
        storageClasses,
        ...(workload.service !== undefined ? { service: workload.service } : {}),
      });
      return {
        ...facts,
        ...(workload.probe !== undefined ? { probe: workload.probe.kind } : {}),
        readyReplicas: facts.kind === "DaemonSet" ? null : facts.replicas,
      };
    });
}

/** The situation the model reads: the fault, its duration and operator, the controller, the knobs. */
export function fileSituation(file: ScenarioFile, inputs: ExpectationInputs): ScenarioSituation {
  const { fault, controller } = file;
  return {
    fault: fault.type,
    ...(fault.durationMs !== undefined ? { durationMs: fault.durationMs } : {}),
    ...(fault.operator !== undefined ? { operator: fault.operator } : {}),
    ...(controller.enabled
      ? {
          controller: controllerTiming(
            { ...inputs.controller, ...controller.settings },
            0,
            inputs.powerLossNotices,
          ),
        }
      : {}),
    knobs: knobs(nodeLossModelInputs(inputs)),
    eviction: inputs.eviction,
  };
}

export function fileExpectations(
  file: ScenarioFile,
  facts: readonly FileWorkloadFacts[],
  inputs: ExpectationInputs,
  lost: LostPods,
): ExpectedMilestone[] {
  const lostOf = (f: WorkloadFacts) => (lost === "assumed" ? Math.min(1, f.replicas) : (lost.get(f.id) ?? 0));
  return expectedScenarioWindows(
    facts.map((f) => ({ facts: f, lostPods: lostOf(f) })),
    fileSituation(file, inputs),
  );
}
