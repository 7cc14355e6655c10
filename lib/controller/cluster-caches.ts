// What the controller reads of the cluster, from watch caches (watch-cache.ts): Nodes, node Leases,
// NodeFences, the pause ConfigMap and VolumeAttachments, started with the controller and kept by
// every replica (a standby's are warm when it takes over); and the pods of the nodes that may be
// fenced, one cache per node (fieldSelector spec.nodeName), started at the first read and stopped
// when the node is neither lost nor fenced any more.
//
// Per-node pod caches, not one cache of every pod: at 1000 nodes × 20 pods one cache would hold
// 20 000 pods (tens of MB, every pod's churn streamed to every replica) for the handful of nodes
// ever fenced; a per-node watch costs one LIST of ~20 pods when a node is first read, and nothing
// while no node is lost.
//
// Two tiers of freshness. The Lease watch carries the evidence (renewals), so it is reopened after
// half of watchStaleAfter of quiet and is stale after watchStaleAfter: then the controller is
// blind. The others change rarely: they are reopened after STATE_REOPEN_QUIET_MS of quiet and are
// stale after that plus watchStaleAfter. While any of them is stale, the controller acts on nothing.
//
// The Lease watch is read at most once per leaseReadInterval (250 ms, at most a quarter check;
// watch-lines.ts): at 1000 nodes it carries about 100 events a second, and taking each as it
// arrived was most of the controller's CPU at rest. A renewal is then received up to that late,
// inside the check interval every observation window already allows for.
import { RekindleError } from "../errors.js";
import { k8s } from "../kube/client.js";
import type { ControllerConfig } from "./config.js";
import { NODE_FENCE_GROUP, NODE_FENCE_PLURAL, NODE_FENCE_VERSION, type NodeFence } from "./fence-state.js";
import { partitionByName } from "./node-fence-store.js";
import { renewTimeOf } from "./observations.js";
import type { CurrentNodeReader } from "./present.js";
import type { Snapshot } from "./snapshot.js";
import { WatchCache, type BlindSpell, type KubeObject, type WatchSource } from "./watch-cache.js";
import { apiWatchSource, type ApiWatchOptions } from "./watch-source.js";

/** A quiet watch of anything but the Leases is reopened after this long (one small request). */
export const STATE_REOPEN_QUIET_MS = 30_000;

/**
 * What the controller reads of a node Lease: its name, version, renewTime and duration. The rest
 * (managedFields, owner, holder: most of its bytes) would otherwise live in the cache until
 * the next renewal and be promoted to the old generation on the way, 100 times a second at 1000
 * nodes.
 */
export function leaseAsRead(lease: k8s.V1Lease): k8s.V1Lease {
  const { name, namespace, resourceVersion } = lease.metadata ?? {};
  const { renewTime, leaseDurationSeconds } = lease.spec ?? {};
  return {
    metadata: { name, namespace, resourceVersion },
    spec: { renewTime, leaseDurationSeconds },
  };
}

const NODE_LEASE_NAMESPACE = "kube-node-lease";

/** What every cache has, whatever it holds. */
type CacheLifecycle = Pick<WatchCache<KubeObject>, "start" | "stop" | "whenSynced" | "staleness">;

/** The reads of a node's workloads that fencing and cleanup need (context.reads). */
export interface WorkloadReads {
  podsOnNode(node: string): Promise<k8s.V1Pod[]>;
  volumeAttachmentsOnNode(node: string): Promise<k8s.V1VolumeAttachment[]>;
}

export interface ClusterCachesOptions {
  /** The cluster: its address and credentials (each LIST is bounded by apiTimeoutMs here). */
  kc: k8s.KubeConfig;
  config: Pick<
    ControllerConfig,
    "namespace" | "configMapName" | "watchStaleAfterMs" | "apiTimeoutMs" | "leaseReadIntervalMs"
  >;
  /** The controller's monotonic clock (ms). */
  now: () => number;
  log?: (message: string) => void;
  /** Stand-in sources (tests): by the path the real one would watch. Default: the API. */
  source?: <T extends KubeObject>(
    path: string,
    query: Record<string, string>,
    what: string,
  ) => WatchSource<T>;
}

export class ClusterCaches implements WorkloadReads {
  readonly nodes: WatchCache<k8s.V1Node>;
  readonly leases: WatchCache<k8s.V1Lease>;
  readonly fences: WatchCache<NodeFence>;
  readonly pause: WatchCache<k8s.V1ConfigMap>;
  readonly volumeAttachments: WatchCache<k8s.V1VolumeAttachment>;
  readonly #pods = new Map<string, WatchCache<k8s.V1Pod>>();
  /** When each Lease's current renewTime was received (monotonic): where its silence starts. */
  readonly #renewedAt = new Map<string, number>();
  readonly #options: ClusterCachesOptions;

  constructor(options: ClusterCachesOptions) {
    this.#options = options;
    const { config } = options;
    this.leases = this.#cache<k8s.V1Lease>(
      `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases`,
      {},
      "node Leases",
      config.watchStaleAfterMs / 2,
      config.watchStaleAfterMs,
      { batchMs: config.leaseReadIntervalMs, project: leaseAsRead },
      (type, lease, previous, atMs) => {
        const name = lease.metadata?.name ?? "";
        if (type === "DELETED") this.#renewedAt.delete(name);
        else if (renewTimeOf(lease) !== renewTimeOf(previous) || !this.#renewedAt.has(name)) {
          this.#renewedAt.set(name, atMs);
        }
      },
    );
    this.nodes = this.#stateCache("/api/v1/nodes", {}, "Nodes");
    this.fences = this.#stateCache(
      `/apis/${NODE_FENCE_GROUP}/${NODE_FENCE_VERSION}/${NODE_FENCE_PLURAL}`,
      {},
      "NodeFences",
    );
    this.pause = this.#stateCache(
      `/api/v1/namespaces/${config.namespace}/configmaps`,
      { fieldSelector: `metadata.name=${config.configMapName}` },
      `ConfigMap ${config.namespace}/${config.configMapName}`,
    );
    this.volumeAttachments = this.#stateCache(
      "/apis/storage.k8s.io/v1/volumeattachments",
      {},
      "VolumeAttachments",
    );
  }

  /** The caches every pass needs current. */
  #required(): CacheLifecycle[] {
    return [this.leases, this.nodes, this.fences, this.pause];
  }

  start(): void {
    for (const cache of [...this.#required(), this.volumeAttachments]) cache.start();
  }

  async stop(): Promise<void> {
    await Promise.all(
      [...this.#required(), this.volumeAttachments, ...this.#pods.values()].map((c) => c.stop()),
    );
    this.#pods.clear();
  }

  /** Starts the caches if need be and waits for their first LIST (each within timeoutMs). */
  async whenSynced(timeoutMs: number): Promise<void> {
    this.start();
    await Promise.all(this.#required().map((c) => c.whenSynced(timeoutMs)));
  }

  /** Why the caches a pass needs are not current, or undefined when they are. */
  staleness(nowMs = this.#options.now()): string | undefined {
    const stale = this.#required()
      .map((c) => c.staleness(nowMs))
      .filter((s) => s !== undefined);
    return stale.length === 0 ? undefined : stale.join("; ");
  }

  /**
   * The blind spell of the Lease watch not taken yet (renewals could not be seen, or nodes could
   * not renew), merged with the Nodes watch's: from the earliest start to the latest end.
   */
  takeBlindSpell(nowMs = this.#options.now()): BlindSpell | undefined {
    const spells = [this.leases.takeBlindSpell(nowMs), this.nodes.takeBlindSpell(nowMs)].filter(
      (s) => s !== undefined,
    );
    if (spells.length === 0) return undefined;
    const ongoing = spells.some((s) => s.untilAt === undefined);
    return {
      sinceAt: Math.min(...spells.map((s) => s.sinceAt)),
      untilAt: ongoing ? undefined : Math.max(...spells.map((s) => s.untilAt ?? 0)),
    };
  }

  /** The pass's view; throws (nothing may be decided) unless every cache it needs is current. */
  snapshot(nowMs = this.#options.now()): Snapshot {
    const stale = this.staleness(nowMs);
    if (stale !== undefined) throw new RekindleError("TIMEOUT", `blind: ${stale}`);
    const leases = new Map<string, k8s.V1Lease>();
    for (const lease of this.leases.values()) leases.set(lease.metadata?.name ?? "", lease);
    // Copies: a status write brings the fence object it was given up to date in place.
    const fences = partitionByName([...this.fences.values()].map((f) => structuredClone(f)));
    const configMap = this.pause.get(this.#options.config.configMapName, this.#options.config.namespace);
    return {
      nodes: [...this.nodes.values()],
      leases,
      renewedAt: this.#renewedAt,
      fences: fences.byNode,
      misnamed: fences.misnamed,
      paused: configMap?.data?.["paused"] === "true",
    };
  }

  /**
   * The node's state now, from the caches, with every Lease renewal received so far taken in
   * (the Lease watch is read in batches); throws while they are not current.
   */
  readonly currentNode: CurrentNodeReader = async (node) => {
    await this.leases.catchUp();
    const stale = this.leases.staleness() ?? this.nodes.staleness();
    if (stale !== undefined) throw new RekindleError("TIMEOUT", `blind: ${stale}`);
    const lease = this.leases.get(node, NODE_LEASE_NAMESPACE);
    if (lease) return { renewTime: renewTimeOf(lease) };
    const current = this.nodes.get(node);
    if (!current) return undefined;
    return {
      renewTime: undefined,
      ready: current.status?.conditions?.find((c) => c.type === "Ready")?.status,
    };
  };

  /** Every pod bound to the node, from its own cache (started, and listed, at its first read). */
  async podsOnNode(node: string): Promise<k8s.V1Pod[]> {
    let cache = this.#pods.get(node);
    if (!cache) {
      cache = this.#stateCache("/api/v1/pods", { fieldSelector: `spec.nodeName=${node}` }, `pods of ${node}`);
      this.#pods.set(node, cache);
    }
    await cache.whenSynced(this.#options.config.apiTimeoutMs);
    const stale = cache.staleness();
    if (stale !== undefined) throw new RekindleError("TIMEOUT", `blind: ${stale}`);
    return [...cache.values()];
  }

  async volumeAttachmentsOnNode(node: string): Promise<k8s.V1VolumeAttachment[]> {
    const cache = this.volumeAttachments;
    await cache.whenSynced(this.#options.config.apiTimeoutMs);
    const stale = cache.staleness();
    if (stale !== undefined) throw new RekindleError("TIMEOUT", `blind: ${stale}`);
    return [...cache.values()].filter((va) => va.spec.nodeName === node);
  }

  /** Stops the pod caches of nodes not in `nodes` (neither lost nor fenced any more). */
  retainPods(nodes: ReadonlySet<string>): void {
    for (const [node, cache] of this.#pods) {
      if (nodes.has(node)) continue;
      this.#pods.delete(node);
      void cache.stop();
    }
  }

  /** Nodes whose pods are cached now. */
  podCacheNodes(): string[] {
    return [...this.#pods.keys()];
  }

  #stateCache<T extends KubeObject>(
    path: string,
    query: Record<string, string>,
    what: string,
  ): WatchCache<T> {
    const stale = STATE_REOPEN_QUIET_MS + this.#options.config.watchStaleAfterMs;
    return this.#cache<T>(path, query, what, STATE_REOPEN_QUIET_MS, stale);
  }

  #cache<T extends KubeObject>(
    path: string,
    query: Record<string, string>,
    what: string,
    reopenQuietMs: number,
    staleAfterMs: number,
    api: ApiWatchOptions<T> = {},
    onChange?: ConstructorParameters<typeof WatchCache<T>>[0]["onChange"],
  ): WatchCache<T> {
    const source =
      this.#options.source?.<T>(path, query, what) ??
      apiWatchSource<T>(this.#options.kc, path, query, what, this.#options.config.apiTimeoutMs, api);
    return new WatchCache<T>({
      source,
      now: this.#options.now,
      staleAfterMs,
      reopenQuietMs,
      ...(onChange ? { onChange } : {}),
      ...(this.#options.log ? { log: this.#options.log } : {}),
    });
  }
}
