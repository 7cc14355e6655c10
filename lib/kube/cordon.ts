// Cordon and uncordon: spec.unschedulable, as `kubectl cordon` and `kubectl uncordon` set it.
import { k8s } from "./client.js";

/** Sets the node's spec.unschedulable (a merge patch, as kubectl sends). */
export async function setUnschedulable(
  kc: k8s.KubeConfig,
  node: string,
  unschedulable: boolean,
): Promise<void> {
  await kc
    .makeApiClient(k8s.CoreV1Api)
    .patchNode(
      { name: node, body: { spec: { unschedulable } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
}
