// The kubelet's volume manager reports the volumes it has mounted, or is about to mount, in
// node.status.volumesInUse. The attach-detach controller will not detach a volume a node reports
// in use until the node stops reporting it, the node is tainted out-of-service, or (on an
// unhealthy node) maxWaitForUnmountDuration — 6 minutes — has passed since the detach was wanted.
// KWOK writes no such field, so the sim writes it for every node whose kwok runs, and leaves a
// stopped or partitioned node's last report as it was: a dead kubelet's report is frozen too.
import { isPodTerminal, k8s } from "../../../kube/client.js";
import { claimNames } from "../../../kube/csi-provisioner.js";

/** The attach-detach controller's unique name of a CSI volume: "kubernetes.io/csi/<driver>^<handle>". */
export function csiUniqueVolumeName(driver: string, volumeHandle: string): string {
  return `kubernetes.io/csi/${driver}^${volumeHandle}`;
}

/** Where a pod's claims lead: a claim's bound volume, a volume's CSI source. */
export interface VolumeLookup {
  volumeOfClaim(namespace: string, claim: string): string | undefined;
  csiOfVolume(volume: string): k8s.V1CSIPersistentVolumeSource | undefined;
}

/** A VolumeLookup over listed claims and volumes, indexed once. */
export function volumeLookup(
  claims: readonly k8s.V1PersistentVolumeClaim[],
  volumes: readonly k8s.V1PersistentVolume[],
): VolumeLookup {
  const volumeOfClaim = new Map(
    claims.map((c) => [`${c.metadata?.namespace ?? ""}/${c.metadata?.name ?? ""}`, c.spec?.volumeName]),
  );
  const csiOfVolume = new Map(
    volumes.flatMap((v) => (v.spec?.csi ? [[v.metadata?.name ?? "", v.spec.csi] as const] : [])),
  );
  return {
    volumeOfClaim: (namespace, claim) => volumeOfClaim.get(`${namespace}/${claim}`),
    csiOfVolume: (volume) => csiOfVolume.get(volume),
  };
}

/**
 * What the kubelet of `nodeName` reports in use: the CSI volumes of every pod bound to it that has
 * not ended, sorted (the kubelet sorts too, so an unchanged set never rewrites the node). Costs
 * the node's pods and their claims, whatever the cluster's size: `lookup` is indexed by its owner.
 */
export function volumesInUseOnNode(
  nodeName: string,
  pods: readonly k8s.V1Pod[],
  lookup: VolumeLookup,
): string[] {
  const inUse = new Set<string>();
  for (const pod of pods) {
    if (pod.spec?.nodeName !== nodeName || isPodTerminal(pod)) continue;
    const namespace = pod.metadata?.namespace ?? "";
    for (const claim of claimNames(pod)) {
      const volume = lookup.volumeOfClaim(namespace, claim);
      const csi = volume === undefined || volume === "" ? undefined : lookup.csiOfVolume(volume);
      if (csi) inUse.add(csiUniqueVolumeName(csi.driver, csi.volumeHandle));
    }
  }
  return [...inUse].sort();
}
