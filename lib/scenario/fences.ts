// Waiting for the recovery controller to finish its NodeFences, so a scenario leaves no fence
// half-undone for the next one's controller to resume.
import {
  isFinished,
  NODE_FENCE_GROUP,
  NODE_FENCE_PLURAL,
  NODE_FENCE_VERSION,
  type NodeFence,
} from "../controller/fence-state.js";
import { k8s } from "../kube/client.js";
import { pollUntil } from "../util/time.js";

/** Resolves once every NodeFence is finished (taints lifted, nodes released). */
export async function waitFencesFinished(kc: k8s.KubeConfig): Promise<void> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  await pollUntil(
    async () => {
      const list = (await api.listClusterCustomObject({
        group: NODE_FENCE_GROUP,
        version: NODE_FENCE_VERSION,
        plural: NODE_FENCE_PLURAL,
      })) as { items: NodeFence[] };
      const open = list.items.filter((f) => !isFinished(f.status));
      return open.length === 0 ? true : undefined;
    },
    { what: "every NodeFence finished (nodes released)", timeoutMs: 120_000, intervalMs: 250 },
  );
}

/**
 * Deletes every NodeFence once finished and waits until they are gone (a running controller lifts
 * whatever their finalizer guards first), so the next scenario starts with no fence history: no
 * per-node fence rate limit carried over, no earlier fence mistaken for its own.
 */
export async function deleteFinishedFences(kc: k8s.KubeConfig): Promise<void> {
  await waitFencesFinished(kc);
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const ref = { group: NODE_FENCE_GROUP, version: NODE_FENCE_VERSION, plural: NODE_FENCE_PLURAL };
  const list = (await api.listClusterCustomObject(ref)) as { items: NodeFence[] };
  for (const fence of list.items) {
    await api.deleteClusterCustomObject({ ...ref, name: fence.metadata.name }).catch(() => undefined);
  }
  await pollUntil(
    async () =>
      ((await api.listClusterCustomObject(ref)) as { items: NodeFence[] }).items.length === 0
        ? true
        : undefined,
    {
      what: "every NodeFence deleted (the controller lifts what their finalizers guard)",
      timeoutMs: 30_000,
      intervalMs: 250,
    },
  );
}
