// NodeFence objects in the API: list, read, create or restart, and status writes (merge patches on
// the status subresource). The controller's memory between passes, restarts and leaders.
import { isNotFound, k8s } from "../kube/client.js";
import {
  NODE_FENCE_GROUP,
  NODE_FENCE_PLURAL,
  NODE_FENCE_VERSION,
  type FenceStatus,
  type NodeFence,
} from "./fence-state.js";

/** The timestamps of one fence's course, cleared when a later loss reuses the object. */
const PER_FENCE_TIMESTAMPS = ["fencedAt", "taintedAt", "cleanedAt", "recoveredAt"] as const;

export class NodeFenceStore {
  readonly #kc: k8s.KubeConfig;

  constructor(kc: k8s.KubeConfig) {
    this.#kc = kc;
  }

  /** Every NodeFence, by the node it fences. */
  async list(): Promise<Map<string, NodeFence>> {
    const fences = (await this.#api().listClusterCustomObject({
      group: NODE_FENCE_GROUP,
      version: NODE_FENCE_VERSION,
      plural: NODE_FENCE_PLURAL,
    })) as { items: NodeFence[] };
    return new Map(fences.items.map((f) => [f.spec.node, f]));
  }

  async read(node: string): Promise<NodeFence | undefined> {
    try {
      return (await this.#api().getClusterCustomObject(this.#ref(node))) as NodeFence;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async create(spec: NodeFence["spec"]): Promise<void> {
    const body: NodeFence = {
      apiVersion: `${NODE_FENCE_GROUP}/${NODE_FENCE_VERSION}`,
      kind: "NodeFence",
      metadata: { name: spec.node },
      spec,
    };
    await this.#api().createClusterCustomObject({
      group: NODE_FENCE_GROUP,
      version: NODE_FENCE_VERSION,
      plural: NODE_FENCE_PLURAL,
      body,
    });
  }

  /** A finished fence of an earlier loss starts over on the same object: new spec. */
  async restart(spec: NodeFence["spec"]): Promise<void> {
    await this.#api().patchClusterCustomObject(
      { ...this.#ref(spec.node), body: { spec } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  }

  /** Writes the whole status (merge patch); `replace` clears fields of an earlier fence first. */
  async writeStatus(node: string, status: FenceStatus, replace = false): Promise<void> {
    const body = replace
      ? { status: { ...Object.fromEntries(PER_FENCE_TIMESTAMPS.map((k) => [k, null])), ...status } }
      : { status };
    await this.#api().patchClusterCustomObjectStatus(
      { ...this.#ref(node), body },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  }

  #api(): k8s.CustomObjectsApi {
    return this.#kc.makeApiClient(k8s.CustomObjectsApi);
  }

  #ref(node: string) {
    return { group: NODE_FENCE_GROUP, version: NODE_FENCE_VERSION, plural: NODE_FENCE_PLURAL, name: node };
  }
}
