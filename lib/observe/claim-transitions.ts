// A PersistentVolumeClaim's binding to its volume: how a workload's pods lead to the volumes
// whose VolumeAttachments are its volume milestones (pod → claim → PV → VolumeAttachment).
import type { k8s } from "../kube/client.js";
import type { KindTransitions } from "./types.js";

/** "pvc-bound" when spec.volumeName is set or changes (the initial list reports the bindings so far). */
export const claimTransitions: KindTransitions<k8s.V1PersistentVolumeClaim> = (make, before, after) => {
  const volume = after?.spec?.volumeName ?? "";
  if (volume === "" || volume === (before?.spec?.volumeName ?? "")) return [];
  return [make("pvc-bound", { detail: { claim: after?.metadata?.name ?? "", volume } })];
};
