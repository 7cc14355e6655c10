// The kubelet's volume manager reports the volumes it has mounted, or is about to mount, in
// node.status.volumesInUse. The attach-detach controller will not detach a volume a node reports
// in use until the node stops reporting it, the node is tainted out-of-service, or (on an
// unhealthy node) maxWaitForUnmountDuration — 6 minutes — has passed since the detach was wanted.
// KWOK writes no such field, so the sim writes it for every node whose kwok runs, and leaves a
// stopped or partitioned node's last report as it was: a dead kubelet's report is frozen too.
import { isPodTerminal, k8s } from "../../kube/client.js";
import { claimNames } from "../../kube/csi-provisioner.js";

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

function sameList(a: readonly string[] | undefined, b: readonly string[]): boolean {
  const left = a ?? [];
  return left.length === b.length && left.every((v, i) => v === b[i]);
}

/**
 * Writes node.status.volumesInUse of each named node where it differs from what its pods use.
 * Returns the nodes whose report changed.
 */
export async function reportVolumesInUse(
  kc: k8s.KubeConfig,
  nodeNames: readonly string[],
  /** Asked again right before each write: a node that died meanwhile keeps its last report. */
  stillAlive: (node: string) => boolean = () => true,
): Promise<{ node: string; volumesInUse: string[] }[]> {
  if (nodeNames.length === 0) return [];
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const [nodes, pods, claims, volumes] = await Promise.all([
    core.listNode(),
    core.listPodForAllNamespaces(),
    core.listPersistentVolumeClaimForAllNamespaces(),
    core.listPersistentVolume(),
  ]);
  const changed: { node: string; volumesInUse: string[] }[] = [];
  const lookup = volumeLookup(claims.items, volumes.items);
  // Indexed once a pass: a 1000-node cluster would otherwise scan every pod for every node.
  const nodeByName = new Map(nodes.items.map((n) => [n.metadata?.name ?? "", n]));
  const podsByNode = new Map<string, k8s.V1Pod[]>();
  for (const pod of pods.items) {
    const on = pod.spec?.nodeName;
    if (on === undefined) continue;
    const list = podsByNode.get(on);
    if (list) list.push(pod);
    else podsByNode.set(on, [pod]);
  }
  for (const name of nodeNames) {
    const node = nodeByName.get(name);
    if (!node) continue;
    const volumesInUse = volumesInUseOnNode(name, podsByNode.get(name) ?? [], lookup);
    if (sameList(node.status?.volumesInUse, volumesInUse) || !stillAlive(name)) continue;
    // A merge patch of the status subresource replaces the list whole and touches nothing else.
    await core.patchNodeStatus(
      { name, body: { status: { volumesInUse } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    changed.push({ node: name, volumesInUse });
  }
  return changed;
}
