// NodeFence objects in the API: list, read, create or restart, status writes and the finalizer.
// The controller's memory between passes, restarts and leaders. Every write carries the
// resourceVersion the writer last saw, so a writer acting on a stale view (a replica that lost the
// leadership and does not know it yet) fails with a conflict instead of overwriting newer state.
import { isNotFound, k8s } from "../kube/client.js";
import { fenceConditions } from "./fence-conditions.js";
import {
  NODE_FENCE_FINALIZER,
  NODE_FENCE_GROUP,
  NODE_FENCE_PLURAL,
  NODE_FENCE_VERSION,
  type FenceStatus,
  type NodeFence,
} from "./fence-state.js";

/** The timestamps of one fence's course, cleared when a later loss reuses the object. */
const PER_FENCE_TIMESTAMPS = ["fencedAt", "taintedAt", "cleanedAt", "recoveredAt"] as const;

const MERGE_PATCH = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);

/**
 * One NodeFence per node, under one name: the node's. The controller names every fence it makes
 * so; a NodeFence made by hand under another name is set apart (the controller refuses it, and
 * it can never shadow the node's own fence nor be written to under the wrong name).
 */
export function partitionByName(items: readonly NodeFence[]): {
  byNode: Map<string, NodeFence>;
  misnamed: NodeFence[];
} {
  const byNode = new Map<string, NodeFence>();
  const misnamed: NodeFence[] = [];
  for (const fence of items) {
    if (fence.metadata.name === fence.spec.node) byNode.set(fence.spec.node, fence);
    else misnamed.push(fence);
  }
  return { byNode, misnamed };
}

export class NodeFenceStore {
  readonly #kc: k8s.KubeConfig;

  constructor(kc: k8s.KubeConfig) {
    this.#kc = kc;
  }

  /** Every NodeFence: by the node it fences those named after it, and those that are not (refused). */
  async list(): Promise<{ byNode: Map<string, NodeFence>; misnamed: NodeFence[] }> {
    const fences = (await this.#api().listClusterCustomObject({
      group: NODE_FENCE_GROUP,
      version: NODE_FENCE_VERSION,
      plural: NODE_FENCE_PLURAL,
    })) as { items: NodeFence[] };
    return partitionByName(fences.items);
  }

  async read(node: string): Promise<NodeFence | undefined> {
    try {
      return (await this.#api().getClusterCustomObject(this.#ref(node))) as NodeFence;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** A new NodeFence, with the finalizer that makes a deletion lift its taints first. */
  async create(spec: NodeFence["spec"]): Promise<NodeFence> {
    const body: NodeFence = {
      apiVersion: `${NODE_FENCE_GROUP}/${NODE_FENCE_VERSION}`,
      kind: "NodeFence",
      metadata: { name: spec.node, finalizers: [NODE_FENCE_FINALIZER] },
      spec,
    };
    return (await this.#api().createClusterCustomObject({
      group: NODE_FENCE_GROUP,
      version: NODE_FENCE_VERSION,
      plural: NODE_FENCE_PLURAL,
      body,
    })) as NodeFence;
  }

  /** A finished fence of an earlier loss starts over on the same object: new spec, the finalizer back. */
  async restart(fence: NodeFence, spec: NodeFence["spec"]): Promise<NodeFence> {
    const finalizers = [...new Set([...(fence.metadata.finalizers ?? []), NODE_FENCE_FINALIZER])];
    const updated = (await this.#api().patchClusterCustomObject(
      {
        ...this.#ref(spec.node),
        body: { metadata: { resourceVersion: fence.metadata.resourceVersion, finalizers }, spec },
      },
      MERGE_PATCH,
    )) as NodeFence;
    Object.assign(fence, updated);
    return fence;
  }

  /**
   * Writes the whole status (merge patch) if nobody wrote the NodeFence since `fence` was read, and
   * brings `fence` up to date (so one step can write twice). `replace` clears the fields of an
   * earlier fence first. The conditions and observedGeneration are derived here, from `status` and
   * the conditions already written (an earlier fence's do not count after `replace`), timed by
   * `status.lastTransitionTime`. A stale `fence` fails with 409 Conflict.
   */
  async writeStatus(fence: NodeFence, status: FenceStatus, replace = false): Promise<void> {
    const generation = fence.metadata.generation;
    const derived: FenceStatus = {
      ...status,
      conditions: fenceConditions(
        status,
        replace ? undefined : (fence.status?.conditions ?? status.conditions),
        generation,
        status.lastTransitionTime ?? new Date().toISOString(),
      ),
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
    const body = {
      metadata: { resourceVersion: fence.metadata.resourceVersion },
      status: replace
        ? { ...Object.fromEntries(PER_FENCE_TIMESTAMPS.map((k) => [k, null])), ...derived }
        : derived,
    };
    const updated = (await this.#api().patchClusterCustomObjectStatus(
      { ...this.#ref(fence.metadata.name), body },
      MERGE_PATCH,
    )) as NodeFence;
    Object.assign(fence, updated);
  }

  /** Lets a NodeFence being deleted go (after its taints were lifted). */
  async removeFinalizer(fence: NodeFence): Promise<void> {
    const finalizers = (fence.metadata.finalizers ?? []).filter((f) => f !== NODE_FENCE_FINALIZER);
    try {
      await this.#api().patchClusterCustomObject(
        {
          ...this.#ref(fence.metadata.name),
          body: { metadata: { resourceVersion: fence.metadata.resourceVersion, finalizers } },
        },
        MERGE_PATCH,
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  #api(): k8s.CustomObjectsApi {
    return this.#kc.makeApiClient(k8s.CustomObjectsApi);
  }

  /** The object named `name`: a node's fence is named after the node (see partitionByName). */
  #ref(name: string) {
    return { group: NODE_FENCE_GROUP, version: NODE_FENCE_VERSION, plural: NODE_FENCE_PLURAL, name };
  }
}
