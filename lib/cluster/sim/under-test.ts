// The sim provider as a cluster under test: node faults map onto the node's kwok process (SIGKILL,
// SIGSTOP/SIGCONT, a fresh process), and the kubelet's own reactions KWOK lacks (pressure
// evictions, graceful shutdown) are simulated by writing what the kubelet would write. Hostile
// conditions for the controller: a skewed kubelet clock (an admission webhook shifts its writes),
// a frozen kube-apiserver (SIGSTOP), a Node re-registered under a new UID.
import { bmcLieControl, BmcLies } from "../bmc-lies.js";
import { SimFenceDriver } from "./fence-driver.js";
import type { FenceDriver } from "../../controller/drivers/types.js";
import type { k8s } from "../../kube/client.js";
import { silentProgress, type Progress } from "../../util/progress.js";
import type { TimingProfile } from "../profiles.js";
import type {
  CapabilityMap,
  ClockSkewOptions,
  ClusterUnderTest,
  EvictionSettings,
  NodeFaultLocator,
  NodeFaultOptions,
  PressureKind,
  ProviderLatencies,
} from "../provider.js";
import { SIM_STORAGE_CLASS, type SimCluster } from "./cluster.js";
import { simProviderLatencies } from "./boot/options.js";
import { SimEvictionManager } from "./kubelet/pressure.js";
import { simulateGracefulShutdown } from "./kubelet/shutdown.js";

export interface SimUnderTestOptions {
  /** Leave the cluster running on destroy(). Default false. */
  keep?: boolean;
  progress?: Progress;
}

export class SimClusterUnderTest implements ClusterUnderTest {
  readonly provider = "sim" as const;
  readonly cluster: SimCluster;
  readonly unsupported = {
    "in-cluster-controller":
      "the sim's KWOK nodes run no containers, so no controller pod can run there (the sim runs the controller in-process)",
  };
  /** What the nodes' BMCs lie about, shared by every fence driver this cluster hands out. */
  readonly #lies = new BmcLies();
  /** The sim can do every fault family, restart its controller manager and fence its nodes. */
  readonly capabilities: Omit<CapabilityMap, "in-cluster-controller"> = {
    lifecycle: this,
    partition: this,
    pressure: this,
    "graceful-shutdown": this,
    "controller-manager-flags": this,
    fencing: this,
    "clock-skew": this,
    "apiserver-pause": this,
    "node-reregistration": this,
    "bmc-lies": bmcLieControl(this.#lies, (line) => {
      this.#progress.info(line);
    }),
  };
  /**
   * The sim's simulated container start and CSI attach latency (openClusterUnderTest keeps the
   * defaults), and its kubelets' wait for a status write before a mount (kubelet/volumes.ts).
   */
  readonly latencies: ProviderLatencies;
  /** The sim's CSI driver: attachable, played by the attacher kwok. */
  readonly storage = { storageClass: SIM_STORAGE_CLASS, attachRequired: true };
  readonly eviction: EvictionSettings;
  readonly #keep: boolean;
  readonly #progress: Progress;
  readonly #pressure = new Map<string, SimEvictionManager>();
  /** Relieved, still holding the pressure condition for the transition period. */
  readonly #settling = new Set<SimEvictionManager>();

  constructor(cluster: SimCluster, options: SimUnderTestOptions = {}) {
    this.cluster = cluster;
    this.eviction = cluster.profile.simKubelet;
    this.latencies = simProviderLatencies(this.eviction);
    this.#keep = options.keep ?? false;
    this.#progress = options.progress ?? silentProgress;
  }

  get description(): string {
    return `sim cluster ${this.cluster.state.name} (real control plane, ${this.cluster.nodeNames().length} KWOK workers)`;
  }

  get runId(): string {
    return this.cluster.runId;
  }

  get profile(): TimingProfile {
    return this.cluster.profile;
  }

  kubeConfig(): k8s.KubeConfig {
    return this.cluster.kubeConfig();
  }

  /** With shared-kwok workers (large clusters): waits until every zone is Normal. Otherwise at once. */
  async settle(signal?: AbortSignal): Promise<void> {
    await this.cluster.waitForZonesNormal(signal);
  }

  workerNodes(): Promise<string[]> {
    return Promise.resolve(this.cluster.nodeNames());
  }

  async stopNode(name: string): Promise<void> {
    await this.cluster.stopNode(name);
  }

  async startNode(name: string): Promise<void> {
    await this.cluster.startNode(name);
  }

  async partitionNode(name: string): Promise<void> {
    await this.cluster.partitionNode(name);
  }

  /** Lifts the partition; a node powered off meanwhile (fenced) stays off until startNode. */
  async healNode(name: string): Promise<void> {
    if (this.cluster.status().nodes.find((n) => n.name === name)?.power === "partitioned") {
      await this.cluster.healNode(name);
    } else {
      this.#progress.info(`node ${name}: not partitioned any more (fenced?), nothing to heal`);
    }
  }

  async shutdownNode(name: string): Promise<void> {
    const { terminated } = await simulateGracefulShutdown(this.kubeConfig(), name, {
      silence: () => this.cluster.silenceNode(name),
      powerOff: () => this.stopNode(name),
      log: (message) => {
        this.#progress.info(`warning: ${message}`);
      },
    });
    this.#progress.info(`node ${name}: graceful shutdown simulated, ${terminated.length} pod(s) terminated`);
  }

  async applyPressure(name: string, kind: PressureKind, options: NodeFaultOptions = {}): Promise<void> {
    const key = `${name}/${kind}`;
    if (this.#pressure.has(key)) return;
    // No setup: the simulated eviction manager's start is the fault.
    options.onEffect?.();
    // The sim's faults are kind's, whose setup sets the kubelet's loop phase (kubelet/pressure.ts).
    const manager = await SimEvictionManager.start(this.kubeConfig(), name, kind, this.eviction, {
      log: (m) => {
        this.#progress.info(m);
      },
      faultPhase: kind === "disk" ? "restarted" : "memory-setup",
    });
    this.#pressure.set(key, manager);
    this.#progress.info(`node ${name}: ${kind} pressure applied (simulated kubelet eviction manager)`);
  }

  relievePressure(name: string, kind: PressureKind): Promise<void> {
    const key = `${name}/${kind}`;
    const manager = this.#pressure.get(key);
    if (manager) {
      manager.relieve();
      this.#pressure.delete(key);
      this.#settling.add(manager);
      void manager.settled().finally(() => this.#settling.delete(manager));
    }
    return Promise.resolve();
  }

  async setClockOffset(name: string, offsetMs: number, options: ClockSkewOptions = {}): Promise<void> {
    await this.cluster.setClockSkew(name, { offsetMs, step: options.step ?? false });
  }

  async clearClockOffset(name: string): Promise<void> {
    await this.cluster.setClockSkew(name, undefined);
  }

  async pauseApiServer(durationMs: number): Promise<void> {
    await this.cluster.pauseApiServer(durationMs);
  }

  async reregisterNode(name: string): Promise<string> {
    return (await this.cluster.reregisterNode(name)).newUid;
  }

  async restartControllerManager(extraFlags: readonly string[]): Promise<void> {
    await this.cluster.restartControllerManager(extraFlags);
  }

  kubectlPath(): string {
    return this.cluster.state.binaries.kubectl;
  }

  controllerManagerLogPath(): string {
    return this.cluster.controllerManagerLogPath;
  }

  fenceDriver(): FenceDriver {
    return new SimFenceDriver(this.cluster.layout.root, { lies: this.#lies });
  }

  faultLocator(): NodeFaultLocator {
    return { provider: "sim", root: this.cluster.state.root };
  }

  keepHint(): string {
    return `KUBECONFIG=${this.cluster.kubeconfigPath}; stop it with: rekindle sim down --name ${this.cluster.state.root}`;
  }

  async destroy(): Promise<void> {
    for (const manager of [...this.#pressure.values(), ...this.#settling]) await manager.stop();
    this.#pressure.clear();
    this.#lies.clearAll();
    // A kept cluster is left answering (a pause in flight has its own resume; this is the backstop).
    this.cluster.resumeApiServer();
    if (!this.#keep) await this.cluster.destroy();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.destroy();
  }
}
