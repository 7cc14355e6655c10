// The cluster part of the run's plan: for the provider chosen, the spec built from the flags that
// provider takes (each variant carries only its own), defaulted here, so the factory
// (lib/cluster/create.ts) reads it as it is.
import type { ExistingAgent } from "../cluster/existing/cluster.js";
import type { FaultRailsRequest } from "../cluster/existing/rails.js";
import type { ClusterSpec, ExistingChoices, SimClusterSpec } from "../cluster/cluster-spec.js";
import { SHARED_STORAGE_CLASS } from "../cluster/kind/storage-classes.js";
import type { ProviderName } from "../cluster/provider.js";
import type { simSizeFlags } from "../cluster/sim/boot/size-flags.js";
import type { RunFlags } from "./run-flags.js";
import type { RunSelection } from "./run-selection.js";
import { scenarioWorkers } from "./sim-size.js";
import { shardGroups } from "./shard-run.js";
import { familyGroups } from "./suite.js";

/** What a cluster spec is built from: the flags, parsed where they are more than text. */
export interface ClusterRequest {
  flags: RunFlags;
  /** --workers, --zones, --pods-per-node, parsed. */
  size: ReturnType<typeof simSizeFlags>;
  /** --allow-faults and its node choice, parsed; undefined: none given. */
  rails?: FaultRailsRequest;
  /** The node agent, wired in with the rails. */
  agent?: ExistingAgent;
}

/** The cluster spec for a provider already chosen (no probing). */
export function clusterSpec(
  provider: ProviderName,
  request: ClusterRequest,
  selection: RunSelection,
): ClusterSpec {
  const { flags } = request;
  switch (provider) {
    case "sim":
      return simSpec(request, selection);
    case "kind": {
      const kindConfig = selection.filePlan?.cluster.kindConfig;
      return {
        provider,
        name: flags["cluster-name"] ?? "rekindle",
        ...(flags.image !== undefined ? { image: flags.image } : {}),
        ...(kindConfig !== undefined ? { configPath: kindConfig } : {}),
        csiStorage: flags["storage-class"] !== SHARED_STORAGE_CLASS,
      };
    }
    case "existing":
      return { provider, ...existingChoices(request) };
  }
}

/**
 * The sim's size: the scenario files', else the flags', else what the selected scenarios need
 * (minWorkers), else 3 workers; zones at most 2 unless asked.
 */
function simSpec({ size }: ClusterRequest, selection: RunSelection): SimClusterSpec {
  const { filePlan, suites, shard, profile, grep } = selection;
  const fromFile = filePlan?.cluster;
  const needed =
    filePlan === undefined && size.workers === undefined
      ? scenarioWorkers(shardGroups(familyGroups(suites), shard), profile, grep)
      : undefined;
  const workers = fromFile?.workers ?? size.workers ?? needed ?? 3;
  const zones = fromFile?.zones ?? size.zones ?? Math.min(2, workers);
  const podsPerNode = fromFile?.podsPerNode ?? size.podsPerNode;
  return { provider: "sim", workers, zones, ...(podsPerNode !== undefined ? { podsPerNode } : {}) };
}

/** The existing provider's choices among the flags, those given; the agent comes with the rails. */
function existingChoices({ flags, rails, agent }: ClusterRequest): ExistingChoices {
  const {
    kubeconfig,
    context,
    "storage-class": storageClass,
    "fence-config": fenceConfig,
    "controller-image": controllerImage,
  } = flags;
  return {
    ...(kubeconfig !== undefined ? { kubeconfig } : {}),
    ...(context !== undefined ? { context } : {}),
    ...(storageClass !== undefined ? { storageClass } : {}),
    ...(fenceConfig !== undefined ? { fenceConfig } : {}),
    ...(controllerImage !== undefined ? { controllerImage } : {}),
    ...(rails !== undefined ? { rails, ...(agent !== undefined ? { agent } : {}) } : {}),
  };
}
