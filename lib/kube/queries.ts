// Read-only questions the harness asks the API about node loss.
import { k8s } from "./client.js";

export const UNREACHABLE_TAINT = "node.kubernetes.io/unreachable";
export const NOT_READY_TAINT = "node.kubernetes.io/not-ready";
export const OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service";

export async function readNode(kc: k8s.KubeConfig, name: string): Promise<k8s.V1Node> {
  return kc.makeApiClient(k8s.CoreV1Api).readNode({ name });
}

export function hasTaint(node: k8s.V1Node, key: string, effect?: string): boolean {
  return (
    node.spec?.taints?.some((t) => t.key === key && (effect === undefined || t.effect === effect)) ?? false
  );
}

export async function volumeAttachmentsFor(
  kc: k8s.KubeConfig,
  volumeName: string,
): Promise<k8s.V1VolumeAttachment[]> {
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  return (await storage.listVolumeAttachment()).items.filter(
    (va) => va.spec.source.persistentVolumeName === volumeName,
  );
}
