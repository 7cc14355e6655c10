// What a suite may do to the cluster under test, whichever provider runs it: sim (real control plane,
// KWOK workers), kind (real nodes in containers) or existing (any kubeconfig, hands off the nodes).
// A provider that cannot do something says why in `unsupported`; suites skip with that reason.
import type { FenceDriver } from "../controller/drivers/types.js";
import type { k8s } from "../kube/client.js";
import type { TimingProfile } from "./profiles.js";

export const PROVIDER_NAMES = ["kind", "sim", "existing"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Node faults a suite may inject, and control-plane changes a scenario may make. */
export const NODE_CAPABILITIES = [
  "lifecycle",
  "partition",
  "pressure",
  "graceful-shutdown",
  /** Restart kube-controller-manager with other flags (restartControllerManager). */
  "controller-manager-flags",
] as const;
export type NodeCapability = (typeof NODE_CAPABILITIES)[number];

export type PressureKind = "memory" | "disk";

/** Kubelet eviction settings the pressure suites rely on (from kind-config.yaml or the sim's model). */
export interface EvictionSettings {
  /** How long a pressure condition stays True after the signal clears. Kubelet default 5 m. */
  pressureTransitionPeriodMs: number;
  /** How often the kubelet's eviction manager looks (10 s upstream, housekeeping). */
  monitoringIntervalMs: number;
  /** Kubelet graceful node shutdown budget (shutdownGracePeriod). */
  shutdownGracePeriodMs: number;
}

/** Where the suites' PersistentVolumeClaims go. */
export interface StorageSettings {
  storageClass: string;
  /** Volumes are attached to a node (VolumeAttachments to detach and attach elsewhere). */
  attachRequired: boolean;
}

export interface ClusterUnderTest extends AsyncDisposable {
  readonly provider: ProviderName;
  /** For banners and reports, e.g. "kind cluster rekindle" or "sim cluster run-ab12cd". */
  readonly description: string;
  readonly runId: string;
  readonly profile: TimingProfile;
  /** Faults this provider cannot inject, each with the reason (suites skip them saying so). */
  readonly unsupported: Partial<Record<NodeCapability, string>>;
  /** Container start and attach latency the timeline model assumes on this provider. */
  readonly latencies: { podStartMs: number; attachMs: number };
  readonly eviction: EvictionSettings;
  /** Storage for the StatefulSet's volume; undefined where the provider deploys no volumes. */
  readonly storage?: StorageSettings;
  kubeConfig(): k8s.KubeConfig;
  /** Worker nodes suites may disturb (never a control-plane node). */
  workerNodes(): Promise<string[]>;
  /** Abrupt loss: the node's kubelet stops with no warning (power cut, kernel panic). */
  stopNode(name: string): Promise<void>;
  /** Power back on; resolves once the node's agent runs again (not necessarily Ready yet). */
  startNode(name: string): Promise<void>;
  /** Cut the node off the API server without stopping it; `healNode` restores it. */
  partitionNode(name: string): Promise<void>;
  healNode(name: string): Promise<void>;
  /** An orderly shutdown the kubelet sees coming (it terminates its pods first). */
  shutdownNode(name: string): Promise<void>;
  /** Pushes the node over its kubelet eviction threshold for `kind` until `relievePressure`. */
  applyPressure(name: string, kind: PressureKind): Promise<void>;
  relievePressure(name: string, kind: PressureKind): Promise<void>;
  /**
   * Restarts kube-controller-manager with these flags added to its own (none: as it was), and
   * resolves once it is healthy again. Present where "controller-manager-flags" is supported.
   */
  restartControllerManager?(extraFlags: readonly string[]): Promise<void>;
  /** kube-controller-manager's log file on this machine, where the provider has one (forced detaches are read from it). */
  controllerManagerLogPath?(): string;
  /** A kubectl for this cluster, where one is to be had (the drain scenario runs it); undefined: none. */
  kubectlPath?(): string | undefined;
  /** How the bundled controller fences this provider's nodes. */
  fenceDriver(): FenceDriver;
  /** Tear down what this run created (a reused or existing cluster is left running). */
  destroy(): Promise<void>;
  /** What to tell the user when the cluster is kept (how to reach it and remove it). */
  keepHint(): string;
}
