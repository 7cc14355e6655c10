// Picks and brings up the cluster under test for `rekindle run`: kind when its CLI and a container
// engine answer (real nodes), sim otherwise (real control plane, KWOK workers), or an existing
// cluster from a kubeconfig.
import { join } from "node:path";
import { RekindleError } from "../errors.js";
import { runCommand } from "../util/command.js";
import type { Progress } from "../util/progress.js";
import { ExistingCluster, type ExistingAgent } from "./existing/cluster.js";
import type { FaultRailsRequest } from "./existing/rails.js";
import { probeEngine } from "./kind/engine.js";
import { findKindBinary } from "../build/kind-binary.js";
import { startKindCluster } from "./kind/start.js";
import { SHARED_STORAGE_CLASS } from "./kind/storage-classes.js";
import type { TimingProfile } from "./profiles.js";
import {
  PROVIDER_NAMES,
  type ClusterUnderTest,
  type ExistingNodeFaults,
  type NodeFaultLocator,
  type ProviderName,
} from "./provider.js";
import { SimCluster } from "./sim/cluster.js";
import { SimClusterUnderTest } from "./sim/under-test.js";

/** The existing provider's choices, as `rekindle run` takes them and the cluster picker uses them. */
export interface ExistingClusterOptions {
  /** kubeconfig (default $KUBECONFIG or ~/.kube/config) and context (default current). */
  kubeconfig?: string;
  context?: string;
  /**
   * --storage-class, the StorageClass of the scenarios' volume. Default: the cluster's default class.
   * kind takes it too: rekindle-csi (attached, the default) or rekindle-shared (nothing to attach).
   */
  storageClass?: string;
  /** --fence-config, the user's fence configuration for the controller (needs rails). Default: none. */
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

export interface ClusterChoiceOptions extends ExistingClusterOptions {
  /** Default: kind when available, else sim. */
  provider?: string;
  profile: TimingProfile;
  /** Where run files go (the sim cluster's state lives under it). */
  runDir: string;
  runId: string;
  /** Leave the cluster running afterwards. Default false. */
  keep?: boolean;
  /** kind: cluster name (reused when it exists). Default "rekindle". */
  clusterName?: string;
  /** kind: node image choice. Default $REKINDLE_KIND_IMAGE or "auto". */
  kindImage?: string;
  /** sim: worker nodes and the zones they are spread over. Default 3 and 2. */
  workers?: number;
  zones?: number;
  /** sim: filler pods on each worker that shares a kwok. Default 0. */
  podsPerNode?: number;
  /** kind: the kind config to render for the profile. Default <repo>/kind-config.yaml. */
  kindConfig?: string;
  progress: Progress;
  signal: AbortSignal;
}

/**
 * Whether kind can run here, and if not, why: a kind CLI (REKINDLE_KIND, PATH or rekindle's cached
 * build) and an engine that runs privileged containers, or the means to run rekindle's private one.
 */
export async function kindAvailable(): Promise<{ available: boolean; why: string }> {
  const binary = findKindBinary();
  if (binary === undefined)
    return { available: false, why: "no kind CLI found (REKINDLE_KIND, PATH, rekindle's cache)" };
  try {
    await runCommand(binary, ["version"], { timeoutMs: 10_000 });
  } catch {
    return { available: false, why: `the kind CLI ${binary} does not run` };
  }
  switch (await probeEngine()) {
    case "ok":
      return {
        available: true,
        why: `kind (${binary}) and a container engine that runs privileged containers`,
      };
    case "privileged-fails":
      return {
        available: true,
        why: `kind (${binary}); privileged containers fail on the default engine, so rekindle's private engine will run them`,
      };
    case "none":
      // No engine of the user's answers: the sim, rather than starting an engine unasked.
      return { available: false, why: "kind is installed but no Docker/Podman engine answers" };
  }
}

export async function chooseProvider(
  requested: string | undefined,
  progress: Progress,
): Promise<ProviderName> {
  if (requested !== undefined) {
    if (!(PROVIDER_NAMES as readonly string[]).includes(requested))
      throw RekindleError.invalidInput("provider", requested, PROVIDER_NAMES);
    progress.detail?.(`provider: ${requested} (--provider)`);
    return requested as ProviderName;
  }
  const kind = await kindAvailable();
  progress.info(`provider: ${kind.available ? "kind" : "sim"} (${kind.why}; choose with --provider)`);
  return kind.available ? "kind" : "sim";
}

export async function openClusterUnderTest(
  provider: ProviderName,
  options: ClusterChoiceOptions,
): Promise<ClusterUnderTest> {
  const { progress, signal } = options;
  switch (provider) {
    case "sim": {
      const cluster = await SimCluster.start({
        name: `run-${options.runId.slice(-6)}`,
        root: join(options.runDir, "cluster"),
        profile: options.profile,
        workers: options.workers ?? 3,
        zones: options.zones ?? Math.min(2, options.workers ?? 3),
        ...(options.podsPerNode !== undefined ? { podsPerNode: options.podsPerNode } : {}),
        // A kept cluster must survive this process; otherwise it dies with it, even on a crash.
        detach: options.keep === true,
        progress,
        signal,
      });
      return new SimClusterUnderTest(cluster, { keep: options.keep === true, progress });
    }
    case "kind":
      return startKindCluster({
        name: options.clusterName ?? "rekindle",
        ...(options.kindImage !== undefined ? { image: options.kindImage } : {}),
        ...(options.kindConfig !== undefined ? { configPath: options.kindConfig } : {}),
        profile: options.profile,
        keep: options.keep === true,
        csiStorage: options.storageClass !== SHARED_STORAGE_CLASS,
        progress,
        signal,
      });
    case "existing":
      return ExistingCluster.open({
        ...(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {}),
        ...(options.context !== undefined ? { context: options.context } : {}),
        ...(options.storageClass !== undefined ? { storageClass: options.storageClass } : {}),
        ...(options.fenceConfig !== undefined ? { fenceConfig: options.fenceConfig } : {}),
        ...(options.controllerImage !== undefined ? { controllerImage: options.controllerImage } : {}),
        profile: options.profile,
        ...(options.rails !== undefined ? { rails: options.rails } : {}),
        ...(options.nodeFaults !== undefined ? { nodeFaults: options.nodeFaults } : {}),
        ...(options.faultLocator !== undefined ? { faultLocator: options.faultLocator } : {}),
        ...(options.agent !== undefined ? { agent: options.agent } : {}),
        progress,
      });
  }
}
