// The cluster a run asks for, one variant per provider: each carries only its own provider's
// choices, already checked and defaulted (lib/run/run-plan.ts builds it), so the factory
// (create.ts) reads it without defaults or copying. JSON-serialisable but for the existing
// variant's node-agent hooks, which only the CLI's own process wires in.
import type { ExistingAgent } from "./existing/cluster.js";
import type { FaultRailsRequest } from "./existing/rails.js";
import type { ExistingNodeFaults, NodeFaultLocator } from "./provider.js";

/** rekindle's kind cluster: real nodes in containers. */
export interface KindClusterSpec {
  provider: "kind";
  /** The cluster's name, reused when it exists. */
  name: string;
  /** Node image choice for a new cluster (see startKindCluster). Default $REKINDLE_KIND_IMAGE or "auto". */
  image?: string;
  /** The kind config to render for the profile (a scenario file's). Default <repo>/kind-config.yaml. */
  configPath?: string;
  /** The scenarios' volume attaches through rekindle-csi (true) or is rekindle-shared (false). */
  csiStorage: boolean;
}

/** rekindle's sim: a real control plane, KWOK workers. */
export interface SimClusterSpec {
  provider: "sim";
  workers: number;
  /** The zones the workers are spread over (at most `workers`). */
  zones: number;
  /** Filler pods on each worker that shares a kwok. Default 0. */
  podsPerNode?: number;
}

/** A cluster rekindle did not create, reached through a kubeconfig. */
export interface ExistingClusterSpec {
  provider: "existing";
  /** Default $KUBECONFIG or ~/.kube/config; the context, default the current one. */
  kubeconfig?: string;
  context?: string;
  /** --storage-class, the StorageClass of the scenarios' volume. Default: the cluster's default class. */
  storageClass?: string;
  /** --fence-config, the user's fence configuration for the controller (needs rails). */
  fenceConfig?: string;
  /** --controller-image, what the nodes run for the in-cluster controller. Default: deployment.yaml's. */
  controllerImage?: string;
  /** --allow-faults with --node-selector or --nodes and --max-faulted-nodes. Default: no node faults. */
  rails?: FaultRailsRequest;
  /** The node agent's capabilities and locator (the CLI wires lib/agent/ in). Default: none. */
  nodeFaults?: ExistingNodeFaults;
  faultLocator?: NodeFaultLocator;
  /** Finds the node agent once the cluster answers (with --allow-faults). Default: none. */
  agent?: ExistingAgent;
}

export type ClusterSpec = KindClusterSpec | SimClusterSpec | ExistingClusterSpec;

/** The existing variant's choices, as `rekindle run` takes them from its flags. */
export type ExistingChoices = Omit<ExistingClusterSpec, "provider">;
