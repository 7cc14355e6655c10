// What a suite may do to the cluster under test, whichever provider runs it: sim (real control plane,
// KWOK workers), kind (real nodes in containers) or existing (any kubeconfig, hands off the nodes).
// A cluster is a small core plus optional capability objects, one per fault family; a scenario
// declares what it needs and is handed a cluster typed to have exactly that (ClusterWith). A
// provider that lacks a capability says why in `unsupported`; suites skip with that reason.
import type { FenceDriver } from "../controller/drivers/types.js";
import type { BmcLie } from "./bmc-lies.js";
import type { k8s } from "../kube/client.js";
import type { EvictionSettings, TimingProfile } from "./profiles.js";

export const PROVIDER_NAMES = ["kind", "sim", "existing"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Node faults a suite may inject, control-plane changes a scenario may make, and fencing. */
export const NODE_CAPABILITIES = [
  "lifecycle",
  "partition",
  "pressure",
  "graceful-shutdown",
  /** Restart kube-controller-manager with other flags and read its log. */
  "controller-manager-flags",
  /** A fence driver for the bundled recovery controller. */
  "fencing",
  /** Skew a node's kubelet clock (its Lease renewTime and heartbeats). */
  "clock-skew",
  /** Freeze kube-apiserver for a while (it accepts connections, answers nothing). */
  "apiserver-pause",
  /** Delete a Node and register it again under the same name with a new UID. */
  "node-reregistration",
  /** The recovery controller as users deploy it: its image and deploy/controller/, in the cluster. */
  "in-cluster-controller",
  /** Make a node's BMC (what the provider's fence driver talks to) lie about its power. */
  "bmc-lies",
] as const satisfies readonly (keyof CapabilityMap)[];
export type NodeCapability = keyof CapabilityMap;

export type PressureKind = "memory" | "disk";

export type { EvictionSettings };

/** Where the suites' PersistentVolumeClaims go. */
export interface StorageSettings {
  storageClass: string;
  /** Volumes are attached to a node (VolumeAttachments to detach and attach elsewhere). */
  attachRequired: boolean;
}

/** Abrupt loss and return: the node's kubelet stops with no warning (power cut, kernel panic). */
/**
 * What a node fault's caller knows beyond the node: its deadline, by when the fault must be reverted
 * even if the caller is gone. Providers whose faults live in this process ignore it; rekindle's node
 * agent arms its dead-man's switch on the node with it.
 */
export interface NodeFaultOptions {
  deadline?: Date;
  /**
   * Pressure only: called once, right before the side effect that is the fault itself, after any
   * setup the provider does first (kind: settling the node, shrinking it, planning the fill from
   * its kubelet's stats), so the fault's time zero is not the setup's. Providers call it.
   */
  onEffect?: () => void;
}

export interface NodeStartOptions {
  /**
   * Called once the node runs again, where the provider has more to do after that before it
   * resolves (the existing provider: the agent's reverts after a power-on). A provider that does
   * nothing more need not call it: the caller takes the return as that moment.
   */
  onRunning?: () => void;
}

export interface NodeLifecycle {
  stopNode(name: string, options?: NodeFaultOptions): Promise<void>;
  /** Power back on; resolves once the node's agent runs again (not necessarily Ready yet). */
  startNode(name: string, options?: NodeStartOptions): Promise<void>;
}

/** Cut the node off the API server without stopping it; `healNode` restores it. */
export interface NodePartition {
  partitionNode(name: string, options?: NodeFaultOptions): Promise<void>;
  healNode(name: string): Promise<void>;
}

/** Pushes the node over its kubelet eviction threshold for `kind` until `relievePressure`. */
export interface NodePressure {
  applyPressure(name: string, kind: PressureKind, options?: NodeFaultOptions): Promise<void>;
  relievePressure(name: string, kind: PressureKind): Promise<void>;
}

/** An orderly shutdown the kubelet sees coming (it terminates its pods first). */
export interface NodeGracefulShutdown {
  shutdownNode(name: string): Promise<void>;
}

/** kube-controller-manager as this machine runs it: restartable with other flags, its log readable. */
export interface ControllerManagerControl {
  /** Restarts it with these flags added to its own (none: as it was); resolves once it is healthy. */
  restartControllerManager(extraFlags: readonly string[]): Promise<void>;
  /** Its log file on this machine (forced detaches are read from it). */
  controllerManagerLogPath(): string;
}

export interface ClockSkewOptions {
  /**
   * Step the clock at once (as `date -s` or an NTP step). Default false: slew it, so the node's
   * renewTime never moves backwards; a backward change then takes as long as its size to reach.
   */
  step?: boolean;
}

/** A node whose kubelet clock is off writes its own time into its Lease and node heartbeats. */
export interface NodeClockSkew {
  /**
   * The node's kubelet clock runs `offsetMs` ahead (positive) or behind (negative) from the node's
   * next write on, until changed or cleared; 0 clears it. The node stays up and renewing.
   */
  setClockOffset(name: string, offsetMs: number, options?: ClockSkewOptions): Promise<void>;
  /** The node's kubelet clock is true again. */
  clearClockOffset(name: string): Promise<void>;
}

/** kube-apiserver stops answering without going away: connections hang, nothing is refused. */
export interface ApiServerPause {
  /** Freezes it for `durationMs`; resolves once it runs again. Never leaves it frozen. */
  pauseApiServer(durationMs: number): Promise<void>;
}

/** A machine reinstalled, or a kubelet re-registering: the Node object comes back with a new UID. */
export interface NodeReregistration {
  /**
   * Deletes the node's Node object and registers the node again under the same name; resolves to
   * the new UID once its agent runs again (not necessarily Ready yet).
   */
  reregisterNode(name: string): Promise<string>;
}

/** How the bundled recovery controller powers this provider's nodes off and on. */
export interface NodeFencing {
  fenceDriver(): FenceDriver;
  /**
   * The controller's --node-selector: the only nodes it may fence (an existing cluster's rails).
   * Default: every node.
   */
  readonly nodeSelector?: string;
}

/**
 * A lying BMC: the provider's fence driver, and the BMC an in-cluster controller reaches, answer
 * for `node` as the lie says (power reads "off" whatever the machine does; a power-off
 * acknowledged and not done). The machine itself is untouched; power-on is never a lie.
 */
export interface BmcLieControl {
  /** From the BMC's next answer on; a lie with both knobs off is the truth. */
  setBmcLie(node: string, lie: Partial<BmcLie>): Promise<void>;
  /** `node`'s BMC tells the truth again. Idempotent. */
  clearBmcLie(node: string): Promise<void>;
}

/** The recovery controller running in the cluster, deployed from its image and deploy/controller/. */
export interface DeployedController {
  /** The controller image the pods run. */
  readonly image: string;
  /** The namespace of its pods and its leader election Lease. */
  readonly namespace: string;
  /** Its pods that are Ready now, with their nodes. */
  readyPods(): Promise<{ name: string; node: string }[]>;
  /** Takes the controller (and whatever serves it outside the cluster) away. Idempotent. */
  remove(): Promise<void>;
}

/** Deploys the bundled controller the way users do, with a fence driver that reaches this provider's nodes. */
export interface InClusterControllerDeployment {
  /** Resolves once every replica is Ready; on failure nothing is left running. */
  deployController(signal?: AbortSignal): Promise<DeployedController>;
}

/** Each capability's object, by the name scenarios declare in `requires`. */
export interface CapabilityMap {
  lifecycle: NodeLifecycle;
  partition: NodePartition;
  pressure: NodePressure;
  "graceful-shutdown": NodeGracefulShutdown;
  "controller-manager-flags": ControllerManagerControl;
  fencing: NodeFencing;
  "clock-skew": NodeClockSkew;
  "apiserver-pause": ApiServerPause;
  "node-reregistration": NodeReregistration;
  "in-cluster-controller": InClusterControllerDeployment;
  "bmc-lies": BmcLieControl;
}

/** Node faults on a cluster rekindle did not create, through rekindle's node agent (lib/agent/). */
export type ExistingNodeFaults = Pick<CapabilityMap, "lifecycle" | "partition" | "pressure"> &
  Partial<Pick<CapabilityMap, "graceful-shutdown">>;

/**
 * Where faults may go on a cluster rekindle did not create (--allow-faults): these nodes only,
 * chosen by the user by selector or name, never a control-plane node, at most `maxNodes` of them.
 * The fault layer refuses any other node (a second wall behind workerNodes()).
 */
export interface FaultRails {
  /** The nodes faults may hit, sorted; never more than maxNodes. */
  readonly allowedNodes: readonly string[];
  /** How many nodes may be faulted at once (--max-faulted-nodes). */
  readonly maxNodes: number;
  /** How the nodes were chosen, for the preflight: "--node-selector pool=chaos". */
  readonly chosenBy: string;
  /** The deadline of a fault with no duration of its own (--fault-deadline). Default: FAULT_DEADLINES.defaultMs. */
  readonly deadlineMs?: number;
}

/** One knob the windows use, and where its value came from (the existing provider reads what it can). */
export interface KnobSource {
  /** e.g. "kubelet.shutdownGracePeriod", "nodeLeaseDurationSeconds". */
  name: string;
  value: string;
  source: "read" | "assumed";
  /** read: the endpoint or object; assumed: why (the profile, or what failed when reading). */
  from: string;
}

/** Latencies the timeline model assumes on a provider, where its parts are slower than instant. */
export interface ProviderLatencies {
  podStartMs: number;
  attachMs: number;
  /**
   * After a VolumeAttachment is attached, how much longer at most until the kubelet mounts it. A
   * real kubelet mounts an attachable volume only once its own node-status write has reported it
   * in volumesInUse (every nodeStatusUpdateFrequency, 10 s) and it is attached; its reconciler
   * looks every 100 ms. So up to 10.1 s at 10 s (kubelet-volume-timing.ts); on kind v1.34 with
   * rekindle-csi replacements ran 1.2–8.2 s after their attach (notes/csi-attach.md). The sim's
   * kubelets wait the same way. Default 0.
   */
  attachSeenMs?: number;
  /**
   * How much longer than a check interval the provider's fence driver takes to power off a
   * partitioned (frozen) node. kind's docker driver SIGKILLs the frozen processes before the
   * engine thaws them: 3.1–3.8 s from the fence's start to a confirmed off on a quiet host, 5.5–7.0 s
   * while a second cluster booted alongside, against 1.2 s for a driver that powers off at once
   * (docs/calibration.md). Default 0.
   */
  frozenPowerOffMs?: number;
  /**
   * How long the provider's startNode may run after its fence driver already reports the node on:
   * kind's docker start shows the container running before the kubelet inside is active, 2.9–3.6 s
   * from the request to the return on a quiet host (safety/powered-on-before-*, where a controller
   * re-reading the power state saw the node on 0.2–0.4 s before the start returned). Default 0.
   */
  powerOnMs?: number;
}

/** An image as the container engine knows it: the reference it was run by and its image ID (sha256:…). */
export interface EngineImage {
  reference: string;
  /** The engine's image ID (content digest of its config); null when the engine could not say. */
  digest: string | null;
}

/** The images a provider ran, for summary.json's environment; each absent where there is none. */
export interface ProviderImages {
  /** The image the nodes run (kind). */
  nodeImage?: EngineImage;
  /** The controller image, when the controller ran in-cluster during this run. */
  controllerImage?: EngineImage;
}

/**
 * The small core every provider has. What else it can do is in `capabilities`, one object per
 * family; what it cannot do is in `unsupported`, with the reason (suites skip with it).
 */
export interface ClusterUnderTest extends AsyncDisposable {
  readonly provider: ProviderName;
  /** For banners and reports, e.g. "kind cluster rekindle" or "sim cluster run-ab12cd". */
  readonly description: string;
  readonly runId: string;
  readonly profile: TimingProfile;
  readonly capabilities: Partial<CapabilityMap>;
  /** Capabilities this provider lacks, each with the reason. */
  readonly unsupported: Partial<Record<NodeCapability, string>>;
  /** Container start and attach latency the timeline model assumes on this provider. */
  readonly latencies: ProviderLatencies;
  /**
   * Its node stop leaves the machine's power on (the existing provider's agent stops the kubelet
   * and the container runtime): a fence driver reads the node on, so no early power read finds it
   * off and the controller waits unhealthyAfter. Absent: a stop powers the node off (kind's
   * container, the sim's kwok).
   */
  readonly stopLeavesPowerOn?: boolean;
  /**
   * Waits until the cluster is fit for the next fault; the harness calls it before each scenario.
   * The sim with shared-kwok workers: every zone Normal (every running node Ready), since a zone
   * still partly disrupted would change the node lifecycle controller's eviction rate. Absent:
   * nothing to wait for.
   */
  settle?(signal?: AbortSignal): Promise<void>;
  /** Kubelet eviction and shutdown settings (from kind-config.yaml, the sim's model, or upstream's). */
  readonly eviction: EvictionSettings;
  /** Storage for the StatefulSet's volume; undefined where the provider deploys no volumes. */
  readonly storage?: StorageSettings;
  /**
   * Why the built-in scenarios' StatefulSet volume could not follow its pod to another node here
   * (node-local storage, or none to be had); those scenarios are skipped with it. Absent: it can.
   */
  readonly volumesStayPut?: string;
  kubeConfig(): k8s.KubeConfig;
  /** Worker nodes suites may disturb (never a control-plane node). */
  workerNodes(): Promise<string[]>;
  /**
   * Once a node is back (Ready, its Lease fresh): waits for what else it needs before it takes the
   * scenarios' pods (kind with its CSI driver: the kubelet's registration of the driver). Default: nothing.
   */
  awaitNodeServing?(name: string, signal?: AbortSignal): Promise<void>;
  /** A kubectl for this cluster, where one is to be had (the drain scenario runs it); undefined: none. */
  kubectlPath?(): string | undefined;
  /** The images its nodes and in-cluster controller ran; absent on providers without images. */
  images?(): Promise<ProviderImages>;
  /**
   * An image with bash and coreutils that its nodes hold already (run with imagePullPolicy Never),
   * for rekindle's own helper pods such as in-cluster probes; absent where pods run no containers.
   */
  toolsImage?(): string;
  /** Which knob values were read from the cluster and which assumed; absent: all from the profile (rekindle made the cluster). */
  readonly knobSources?: readonly KnobSource[];
  /** The nodes faults are confined to (an existing cluster with --allow-faults); absent: no such limit. */
  readonly faultRails?: FaultRails;
  /** Where a later process finds this cluster's nodes to revert a fault; absent: no node faults here. */
  faultLocator?(): NodeFaultLocator;
  /** Tear down what this run created (a reused or existing cluster is left running). */
  destroy(): Promise<void>;
  /** What to tell the user when the cluster is kept (how to reach it and remove it). */
  keepHint(): string;
}

/**
 * How a later process reaches this cluster's nodes again to revert a fault: the fault journal
 * (lib/fault/) writes it into each record, so `rekindle reap` can undo what a dead run left.
 * sim: the cluster's state directory (as `rekindle sim node` attaches); kind: the cluster name and
 * the container engine its nodes run on (DOCKER_HOST, absent: the default engine); existing: the
 * namespace of rekindle's node agent (lib/agent/), reached through the reaping process's kubeconfig.
 */
export type NodeFaultLocator =
  | { provider: "sim"; root: string }
  | { provider: "kind"; cluster: string; dockerHost?: string }
  | { provider: "existing"; agentNamespace: string };

/** A cluster known to have the capabilities `R` (what a scenario declaring `requires: R` is handed). */
export type ClusterWith<R extends NodeCapability> = ClusterUnderTest & {
  readonly capabilities: Pick<CapabilityMap, R>;
};

/** Narrows a cluster to one with every capability in `required`; the missing ones are returned otherwise. */
export function missingCapabilities<R extends NodeCapability>(
  cluster: ClusterUnderTest,
  required: readonly R[],
): { ok: true; cluster: ClusterWith<R> } | { ok: false; missing: { capability: R; reason: string }[] } {
  const missing = required
    .filter((capability) => cluster.capabilities[capability] === undefined)
    .map((capability) => ({
      capability,
      reason: cluster.unsupported[capability] ?? `the ${cluster.provider} provider does not offer it`,
    }));
  return missing.length === 0 ? { ok: true, cluster: cluster as ClusterWith<R> } : { ok: false, missing };
}

/** The capability objects a provider offers: every one it implements, less those it states unsupported. */
export function offeredCapabilities(
  implemented: Partial<CapabilityMap>,
  unsupported: Partial<Record<NodeCapability, string>>,
): Partial<CapabilityMap> {
  const offered: Partial<Record<NodeCapability, unknown>> = {};
  for (const [name, capability] of Object.entries(implemented) as [NodeCapability, unknown][]) {
    if (unsupported[name] === undefined) offered[name] = capability;
  }
  return offered as Partial<CapabilityMap>;
}
