// The kind provider's cluster: real kubelets in kind node containers (started by start.ts). Node
// faults go to the containers through testcontainers' runtime client; for pressure the node is
// first made to look small to its kubelet (small-node.ts), then filled past the kubelet's own
// threshold as its stats report it.
export { KIND_CSI_ATTACH_MS, KIND_LATENCIES } from "./latencies.js";
import { kindLatencies } from "./latencies.js";
import { join } from "node:path";
import { bmcLieControl, BmcLies, lyingFenceDriver } from "../bmc-lies.js";
import { DockerFenceDriver } from "./fence-driver.js";
import type { FenceDriver } from "../../controller/drivers/types.js";
import { errorMessage, RekindleError } from "../../errors.js";
import { loadKubeConfig, type k8s } from "../../kube/client.js";
import { readNode } from "../../kube/queries.js";
import { onInterrupt } from "../../util/cleanup.js";
import { defaultKubectl, stateRoot } from "../../util/paths.js";
import { silentProgress, type Progress } from "../../util/progress.js";
import { pollUntil } from "../../util/time.js";
import type { TimingProfile } from "../profiles.js";
import {
  offeredCapabilities,
  type CapabilityMap,
  type ClusterUnderTest,
  type DeployedController,
  type EvictionSettings,
  type NodeCapability,
  type NodeFaultLocator,
  type NodeFaultOptions,
  type PressureKind,
  type ProviderLatencies,
  type ProviderImages,
  type StorageSettings,
} from "../provider.js";
import { KindCli, kindArgs } from "./cli.js";
import { imageRefs } from "./image/recipe.js";
import { deployInClusterController } from "./in-cluster-controller.js";
import { DEFAULT_KIND_CONFIG, type RenderedKindConfig } from "./config.js";
import { checkFillCap, defaultMaxFillBytes, planFill, PRESSURE_SIGNALS, type FillPlanner } from "./fill.js";
import type { KindNodes } from "./nodes.js";
import { fillNode, hasFill, relieveNode } from "./pressure.js";
import { formatBytes, parseThreshold, type EvictionThreshold } from "./quantity.js";
import { DEFAULT_SMALL_NODE, type SmallNodeSettings } from "./small-node.js";
import { SmallNodes } from "./small-nodes.js";
import { KindStorage } from "./storage.js";
import { KindControllerManager } from "./controller-manager.js";
import { fetchSignalStats, statsFor } from "./stats.js";

/** Every wait of the kind provider, units in the names. */
export const KIND_TIMEOUTS = {
  /** `kind create cluster --wait`: the control plane Ready. */
  createWait: "5m",
  /** Then every worker Ready and untainted (kind waits for the control plane only). */
  workersReadyMs: 180_000,
  /** After startNode: the node's kubelet service active again (systemd boots in seconds). */
  agentActiveMs: 120_000,
  /** Time beyond the kubelet's shutdownGracePeriod for systemd to halt the node before SIGKILL. */
  shutdownExtraSeconds: 30,
  /** kind delete cluster. */
  deleteMs: 300_000,
} as const;

/** The kubelet eviction manager's housekeeping interval (fixed in the kubelet, 10 s). */
export const KIND_MONITORING_INTERVAL_MS = 10_000;

/** The node condition each pressure kind raises. */
const PRESSURE_CONDITIONS: Readonly<Record<PressureKind, string>> = {
  memory: "MemoryPressure",
  disk: "DiskPressure",
};

/** Run in a node after startNode until it exits 0: the kubelet unit is running again. */
export const DEFAULT_AGENT_PROBE = ["systemctl", "is-active", "--quiet", "kubelet.service"] as const;

export interface KindClusterInit {
  name: string;
  runId: string;
  profile: TimingProfile;
  config: RenderedKindConfig;
  /** undefined: no kubeconfig (stand-in nodes); kubeConfig() then throws. */
  kubeconfigPath: string | undefined;
  /** This run created the cluster (destroy deletes it unless keep). */
  created: boolean;
  keep?: boolean;
  cli: KindCli;
  nodes: KindNodes;
  unsupported?: Partial<Record<NodeCapability, string>>;
  maxFillBytes?: number;
  fillPlanner?: FillPlanner;
  /**
   * How small a pressured node looks to its kubelet (small-node.ts). null: nodes keep their real
   * size (stand-in nodes without a kubelet; on a real node the fill must then be host-sized).
   * Default DEFAULT_SMALL_NODE.
   */
  smallNode?: SmallNodeSettings | null;
  agentProbe?: readonly string[] | null;
  /** Run after destroy() deleted the cluster (host settings restored, a private engine stopped). */
  afterDelete?: () => Promise<void>;
  /** Added to the hint a kept or reused cluster gets. */
  keepNote?: string;
  progress?: Progress;
}

export class KindCluster implements ClusterUnderTest {
  readonly provider = "kind" as const;
  readonly name: string;
  readonly runId: string;
  readonly profile: TimingProfile;
  readonly unsupported: Partial<Record<NodeCapability, string>>;
  /** This cluster's own fault methods, less what the node image cannot do (probed at start). */
  readonly capabilities: Partial<CapabilityMap>;
  readonly #storage = new KindStorage();
  readonly eviction: EvictionSettings;
  readonly config: RenderedKindConfig;
  readonly kubeconfigPath: string | undefined;
  readonly created: boolean;
  readonly keep: boolean;
  readonly nodes: KindNodes;
  readonly cli: KindCli;
  readonly maxFillBytes: number;
  readonly #planner: FillPlanner;
  readonly #small: SmallNodes | undefined;
  readonly #agentProbe: readonly string[] | null;
  readonly #progress: Progress;
  readonly #afterDelete: (() => Promise<void>) | undefined;
  readonly #keepNote: string | undefined;
  #kubeConfig: k8s.KubeConfig | undefined;
  #destroyed = false;
  /** The controller image deployed in this run, if any (for images()). */
  #controllerImage: string | undefined;
  #releaseInterrupt: (() => void) | undefined;
  readonly #controllerManager: KindControllerManager;
  /** What the nodes' BMCs lie about: the docker driver's and the power webhook's. */
  readonly #lies = new BmcLies();

  constructor(init: KindClusterInit) {
    this.name = init.name;
    this.runId = init.runId;
    this.profile = init.profile;
    this.config = init.config;
    this.kubeconfigPath = init.kubeconfigPath;
    this.created = init.created;
    this.keep = init.keep === true;
    this.cli = init.cli;
    this.nodes = init.nodes;
    this.#controllerManager = new KindControllerManager({
      kc: () => this.kubeConfig(),
      nodes: init.nodes,
      controlPlane: `${init.name}-control-plane`,
      progress: init.progress ?? silentProgress,
    });
    this.unsupported = {
      // kind runs kube-controller-manager as a static pod, reached through the API server.
      ...(init.kubeconfigPath === undefined
        ? {
            "controller-manager-flags":
              "kube-controller-manager is reached through the API server, and this cluster was opened without a kubeconfig",
          }
        : {}),
      // Containers share the host's clock (no time namespace for CLOCK_REALTIME); the sim shifts a
      // kubelet's writes in an admission webhook instead, which kind clusters do not deploy yet.
      "clock-skew":
        "skewing a kubelet's clock is not implemented for kind clusters yet (node containers share the host clock; the sim's Lease-shifting webhook is not deployed on kind)",
      // docker pause of the control-plane container would freeze etcd, the controller manager and
      // the scheduler too: another fault than a frozen apiserver.
      "apiserver-pause":
        "pausing kube-apiserver alone is not implemented for kind clusters yet (it runs as a static pod beside etcd and the controllers in the control-plane container)",
      "node-reregistration":
        "re-registering a kind node under a new UID is not implemented yet (its kubelet would have to re-register: delete the Node, then restart the kubelet so it registers again)",
      ...init.unsupported,
    };
    this.capabilities = offeredCapabilities(
      {
        lifecycle: this,
        partition: this,
        pressure: this,
        "graceful-shutdown": this,
        fencing: this,
        "in-cluster-controller": this,
        "controller-manager-flags": this.#controllerManager,
        "bmc-lies": bmcLieControl(this.#lies, (line) => {
          this.#progress.info(line);
        }),
      },
      this.unsupported,
    );
    this.maxFillBytes = init.maxFillBytes ?? defaultMaxFillBytes();
    this.#planner = init.fillPlanner ?? ((node, kind) => this.#planFromKubelet(node, kind));
    this.#small =
      init.smallNode === null
        ? undefined
        : new SmallNodes({
            nodes: this.nodes,
            settings: init.smallNode ?? DEFAULT_SMALL_NODE,
            stats: (node) => fetchSignalStats(this.kubeConfig(), node),
            condition: async (node, type) =>
              (await readNode(this.kubeConfig(), node)).status?.conditions?.find((c) => c.type === type)
                ?.status,
            pressureTransitionPeriodMs: init.config.kubelet.pressureTransitionPeriodMs,
            progress: init.progress ?? silentProgress,
          });
    this.#agentProbe = init.agentProbe === undefined ? DEFAULT_AGENT_PROBE : init.agentProbe;
    this.#progress = init.progress ?? silentProgress;
    this.#afterDelete = init.afterDelete;
    this.#keepNote = init.keepNote;
    this.eviction = {
      pressureTransitionPeriodMs: init.config.kubelet.pressureTransitionPeriodMs,
      monitoringIntervalMs: KIND_MONITORING_INTERVAL_MS,
      statusUpdateIntervalMs: init.config.kubelet.statusUpdateIntervalMs,
      shutdownGracePeriodMs: init.config.kubelet.shutdownGracePeriodMs,
    };
    if (this.created && !this.keep) this.#releaseInterrupt = onInterrupt(() => this.destroy());
  }

  get description(): string {
    return `kind cluster ${this.name}${this.created ? "" : " (reused)"}`;
  }

  kubeConfig(): k8s.KubeConfig {
    if (this.kubeconfigPath === undefined) {
      throw new RekindleError("PRECONDITION", `kind cluster ${this.name} was opened without a kubeconfig`, {
        hint: "start it with startKindCluster, which writes one from `kind get kubeconfig`",
      });
    }
    this.#kubeConfig ??= loadKubeConfig(this.kubeconfigPath);
    return this.#kubeConfig;
  }

  /**
   * Installs the shared StorageClass and runs its provisioner in this process until destroy().
   * startKindCluster calls it; a KindCluster over stand-in nodes (no API server) never does.
   */
  async startStorage(options: { csi?: boolean; signal?: AbortSignal } = {}): Promise<void> {
    await this.#storage.start({
      kc: this.kubeConfig(),
      cli: this.cli,
      cluster: this.name,
      workers: () => this.workerNodes(),
      progress: this.#progress,
      ...options,
    });
  }

  /**
   * Shared volumes that can follow a pod to any worker: rekindle-shared (hostPath, nothing to
   * attach), or with startStorage({ csi: true }) rekindle-csi (attached: notes/csi-attach.md).
   */
  get storage(): StorageSettings {
    return this.#storage.settings;
  }

  /** KIND_LATENCIES; with rekindle-csi, the attach path's own (KIND_CSI_ATTACH_MS, the kubelet's wait). */
  get latencies(): ProviderLatencies {
    return kindLatencies(this.eviction.statusUpdateIntervalMs, this.storage.attachRequired);
  }

  async workerNodes(): Promise<string[]> {
    return this.nodes.workers();
  }

  async awaitNodeServing(name: string, signal?: AbortSignal): Promise<void> {
    await this.#storage.awaitNodeServing(this.kubeConfig(), name, signal);
  }

  /** Node faults touch workers only: a stopped control plane would end the whole test. */
  async #worker(name: string): Promise<string> {
    const workers = await this.workerNodes();
    if (!workers.includes(name)) throw RekindleError.invalidInput("worker node", name, workers);
    return name;
  }

  /** docker kill (SIGKILL to systemd): kubelet, containerd and every pod die with no warning. */
  async stopNode(name: string): Promise<void> {
    await this.nodes.kill(await this.#worker(name));
  }

  /** docker start: systemd boots, containerd and the kubelet come back; resolves once kubelet is active. */
  async startNode(name: string): Promise<void> {
    await this.nodes.start(await this.#worker(name));
    const probe = this.#agentProbe;
    if (probe === null) return;
    await pollUntil(async () => ((await this.nodes.exec(name, probe)).exitCode === 0 ? true : undefined), {
      what: `the kubelet on node ${name} to be active (${probe.join(" ")})`,
      timeoutMs: KIND_TIMEOUTS.agentActiveMs,
      intervalMs: 1_000,
    });
  }

  /** docker pause: the cgroup freezer stops the kubelet mid-step; the API server hears nothing. */
  async partitionNode(name: string): Promise<void> {
    await this.nodes.pause(await this.#worker(name));
  }

  async healNode(name: string): Promise<void> {
    await this.nodes.unpause(await this.#worker(name));
  }

  /**
   * `systemctl poweroff` in the node (see KindNodes.shutDown): the kubelet's shutdown manager ends
   * its pods first. SIGKILL only if the node is still up shutdownGracePeriod + 30 s later.
   */
  async shutdownNode(name: string): Promise<void> {
    const timeoutSeconds =
      Math.ceil(this.eviction.shutdownGracePeriodMs / 1000) + KIND_TIMEOUTS.shutdownExtraSeconds;
    const { forced } = await this.nodes.shutDown(await this.#worker(name), timeoutSeconds);
    if (forced) {
      this.#progress.info(
        `warning: node ${name} was still up ${timeoutSeconds}s after systemctl poweroff; killed it (a unit that ignores SIGTERM holds the halt)`,
      );
    }
  }

  /** The evictionHard threshold of `kind`'s signal, as the kind config sets it. */
  #threshold(kind: PressureKind): EvictionThreshold {
    const signal = PRESSURE_SIGNALS[kind];
    const written = this.config.kubelet.evictionHard[signal];
    if (written === undefined) {
      throw new RekindleError(
        "PRECONDITION",
        `the kind config sets no evictionHard ${signal}, so rekindle cannot size ${kind} pressure`,
        {
          hint: `set evictionHard: { ${signal}: ... } in the KubeletConfiguration patch of ${DEFAULT_KIND_CONFIG}`,
        },
      );
    }
    return parseThreshold(written);
  }

  async #planFromKubelet(node: string, kind: PressureKind) {
    const threshold = this.#threshold(kind);
    const stats = statsFor(await fetchSignalStats(this.kubeConfig(), node), kind);
    return planFill(kind, stats, threshold);
  }

  /** Makes the node look small to its kubelet (small-node.ts); says how, for the progress line. */
  async #shrink(small: SmallNodes, name: string, kind: PressureKind): Promise<string> {
    if (kind === "memory") {
      const { memTotalBytes, guard } = await small.shrinkMemory(name, this.#threshold(kind));
      return `MemTotal shown to the kubelet ${formatBytes(memTotalBytes)}, ${guard}`;
    }
    await small.shrinkNodefs(name);
    return `kubelet moved onto a ${formatBytes(small.settings.nodefsBytes)} filesystem (restarted)`;
  }

  /** Puts back what #shrink changed, at once (disk: without waiting for the condition to clear). */
  async #unshrinkNow(small: SmallNodes, name: string, kind: PressureKind): Promise<void> {
    if (kind === "memory") return small.restoreMemory(name);
    await small.settle(name, { hurry: true });
    await small.restoreNodefs(name);
  }

  /**
   * Makes the node small to its kubelet, then writes a fill sized past the kubelet's evictionHard
   * threshold (see pressure.ts and small-node.ts). Idempotent: a node that already carries this
   * kind's fill is left as it is. A failure puts back what was changed.
   */
  async applyPressure(name: string, kind: PressureKind, options: NodeFaultOptions = {}): Promise<void> {
    await this.#worker(name);
    await this.#small?.settle(name);
    if (await hasFill(this.nodes, name, kind)) {
      this.#progress.info(`${kind} pressure on ${name}: already applied`);
      return;
    }
    const small = this.#small;
    try {
      const shrunk = small ? `${await this.#shrink(small, name, kind)}; ` : "";
      const plan = await this.#planner(name, kind);
      checkFillCap(name, plan, this.maxFillBytes);
      // The fault's time zero: the setup above (settle, shrink, plan) took seconds on a busy host.
      options.onEffect?.();
      await fillNode(this.nodes, name, kind, plan.fillBytes);
      this.#progress.info(
        `${kind} pressure on ${name}: ${shrunk}wrote ${formatBytes(plan.fillBytes)} (${plan.signal})`,
      );
    } catch (error) {
      if (small) await this.#unshrinkNow(small, name, kind).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Removes the fill (and its tmpfs) at once, so the kubelet sees the signal recover. Memory: the
   * node's real meminfo and limits are back before this returns. Disk: the kubelet goes back to its
   * own filesystem once DiskPressure has cleared (a kubelet restart would end the condition
   * early); a later applyPressure, relievePressure or destroy waits for that. Idempotent.
   */
  async relievePressure(name: string, kind: PressureKind): Promise<void> {
    await this.#worker(name);
    const small = this.#small;
    // Memory: the real MemTotal first, the signal's quicker way back (the kubelet re-reads it
    // within 5 s; the working set without the fill shows at its next stats housekeeping).
    if (small && kind === "memory") await small.restoreMemory(name);
    const filled = await hasFill(this.nodes, name, kind);
    await relieveNode(this.nodes, name, kind);
    if (!small || kind === "memory") return;
    if (!filled) {
      // Relieved before: wait for that restore (or do it now if nothing is pending).
      await small.settle(name);
      return small.restoreNodefs(name);
    }
    small.restoreNodefsWhenCleared(name, PRESSURE_CONDITIONS[kind]);
  }

  /** A kept or reused cluster: every node this run made small is its real size again. */
  async #restoreSmallNodes(small: SmallNodes): Promise<void> {
    for (const name of small.touched) {
      try {
        for (const kind of ["memory", "disk"] as const) {
          await relieveNode(this.nodes, name, kind);
          await this.#unshrinkNow(small, name, kind);
        }
      } catch (error) {
        this.#progress.info(`could not put node ${name} back to its real size: ${errorMessage(error)}`);
      }
    }
  }

  /**
   * The bundled controller as users deploy it: its image built here and loaded into the nodes,
   * deploy/controller/ applied unchanged, the webhook fence driver pointed at the kind power
   * webhook (in-cluster-controller.ts).
   */
  async deployController(signal?: AbortSignal): Promise<DeployedController> {
    const controller = await deployInClusterController({
      cluster: this.name,
      runId: this.runId,
      kc: this.kubeConfig(),
      cli: this.cli,
      lies: this.#lies,
      progress: this.#progress,
      ...(signal ? { signal } : {}),
    });
    this.#controllerImage = controller.image;
    return controller;
  }

  /** The node image, and the controller image if this run deployed it, with the engine's image IDs. */
  async images(): Promise<ProviderImages> {
    const nodeImage = await this.nodes.nodeImage();
    const controller = this.#controllerImage;
    return {
      ...(nodeImage ? { nodeImage } : {}),
      ...(controller !== undefined
        ? { controllerImage: { reference: controller, digest: await this.nodes.imageId(controller) } }
        : {}),
    };
  }

  /** rekindle's node image preloads its Debian userland image (bash, coreutils, perl); kind's own image does not. */
  toolsImage(): string {
    return imageRefs().userland;
  }

  /** $REKINDLE_KUBECTL, else kubectl on PATH (a kind run needs none otherwise). */
  kubectlPath(): string | undefined {
    return defaultKubectl();
  }

  fenceDriver(): FenceDriver {
    return lyingFenceDriver(new DockerFenceDriver(), this.#lies);
  }

  /** Deletes the cluster if this run created it and keep is off; a reused cluster stays. */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#lies.clearAll();
    this.#releaseInterrupt?.();
    await this.#storage.stop();
    this.#controllerManager.stop();
    const deleting = this.created && !this.keep;
    if (this.#small) {
      if (deleting) this.#small.abandon();
      else await this.#restoreSmallNodes(this.#small);
    }
    if (!deleting) {
      this.#progress.info(this.keepHint());
      return;
    }
    const phase = this.#progress.phase(`deleting kind cluster ${this.name}`);
    try {
      await this.cli.run(kindArgs.deleteCluster(this.name, this.#kubeconfigFile()), {
        timeoutMs: KIND_TIMEOUTS.deleteMs,
      });
      phase.end("deleted");
    } finally {
      await this.#afterDelete?.();
    }
  }

  #kubeconfigFile(): string {
    return this.kubeconfigPath ?? join(stateRoot(), "kind", this.name, "kubeconfig");
  }

  /** The cluster by name, on the engine this process talks to (DOCKER_HOST when set). */
  faultLocator(): NodeFaultLocator {
    const dockerHost = process.env["DOCKER_HOST"];
    return { provider: "kind", cluster: this.name, ...(dockerHost ? { dockerHost } : {}) };
  }

  keepHint(): string {
    const reach = this.kubeconfigPath !== undefined ? `export KUBECONFIG=${this.kubeconfigPath}; ` : "";
    const remove = `kind delete cluster --name ${this.name}`;
    const note = this.#keepNote !== undefined ? `; ${this.#keepNote}` : "";
    return this.created
      ? `kind cluster ${this.name} kept: ${reach}delete it with: ${remove}${note}`
      : `kind cluster ${this.name} was reused and stays running: ${reach}delete it with: ${remove}${note}`;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.destroy();
  }
}
