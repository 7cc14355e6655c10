// The kind provider: real kubelets in kind node containers. The cluster comes from the kind CLI
// (reused when `kind get clusters` lists it, else created from kind-config.yaml rendered for the
// timing profile); node faults go to the containers through testcontainers' runtime client.
import { randomBytes } from "node:crypto";
import { getContainerRuntimeClient } from "testcontainers";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { DockerFenceDriver } from "./fence-driver.js";
import type { FenceDriver } from "../../controller/drivers/types.js";
import { RekindleError } from "../../errors.js";
import { loadKubeConfig, type k8s } from "../../kube/client.js";
import { onInterrupt } from "../../util/cleanup.js";
import { defaultKubectl, stateRoot } from "../../util/paths.js";
import { silentProgress, type Progress } from "../../util/progress.js";
import { pollUntil } from "../../util/time.js";
import { TIMING_PROFILES, type TimingProfile } from "../profiles.js";
import {
  offeredCapabilities,
  type CapabilityMap,
  type ClusterUnderTest,
  type EvictionSettings,
  type NodeCapability,
  type PressureKind,
} from "../provider.js";
import { KindCli, kindArgs } from "./cli.js";
import { DEFAULT_KIND_CONFIG, renderKindConfig, writeKindConfig, type RenderedKindConfig } from "./config.js";
import { checkFillCap, defaultMaxFillBytes, planFill, PRESSURE_SIGNALS, type FillPlanner } from "./fill.js";
import { connectContainerEngine, KindNodes, type RuntimeClientFactory } from "./nodes.js";
import { fillNode, hasFill, relieveNode } from "./pressure.js";
import { formatBytes, parseThreshold } from "./quantity.js";
import { installSharedStorageClass, SHARED_STORAGE_CLASS, startSharedProvisioner } from "./shared-storage.js";
import { fetchSignalStats, statsFor } from "./stats.js";

/** Every wait of the kind provider, units in the names. */
export const KIND_TIMEOUTS = {
  /** `kind create cluster --wait`: the control plane Ready. */
  createWait: "5m",
  /** After startNode: the node's kubelet service active again (systemd boots in seconds). */
  agentActiveMs: 120_000,
  /** docker stop grace beyond the kubelet's shutdownGracePeriod before the engine SIGKILLs. */
  shutdownExtraSeconds: 30,
  /** kind delete cluster. */
  deleteMs: 300_000,
} as const;

/**
 * Container start on kind: image present in the node's containerd (fixtures use small images,
 * pulled once), sandbox + CNI (kindnet) + container start measure 1–3 s on a CI runner; 3 s is the
 * upper end so the expected timeline is not too tight on a busy 2–4 core machine.
 * Attach: the suites' volumes come from the rekindle-shared StorageClass (shared-storage.ts),
 * hostPath volumes with no attacher and no VolumeAttachment, so there is nothing to wait for.
 */
export const KIND_LATENCIES = { podStartMs: 3_000, attachMs: 0 } as const;

/** The kubelet eviction manager's housekeeping interval (fixed in the kubelet, 10 s). */
export const KIND_MONITORING_INTERVAL_MS = 10_000;

/** Run in a node after startNode until it exits 0: the kubelet unit is running again. */
export const DEFAULT_AGENT_PROBE = ["systemctl", "is-active", "--quiet", "kubelet.service"] as const;

/** systemd-logind talks over the system bus; without it the kubelet gets no shutdown inhibitor. */
const SYSTEM_BUS_SOCKET = "/run/dbus/system_bus_socket";
/** Where kubeadm writes the kubelet's configuration on a node. */
const KUBELET_CONFIG_PATH = "/var/lib/kubelet/config.yaml";

const NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,48}[a-z0-9])?$/;

export interface KindClusterOptions {
  /** kind cluster name. Default "rekindle". */
  name?: string;
  /** Timing profile. Default: the "default" profile (kind-config.yaml as written). */
  profile?: TimingProfile;
  /** The kind config rendered for the profile. Default <repo>/kind-config.yaml. */
  configPath?: string;
  /** kind binary. Default $REKINDLE_KIND, else "kind" on PATH. */
  kindBinary?: string;
  /** Use a cluster `kind get clusters` already lists (never deleted by destroy). Default true. */
  reuse?: boolean;
  /** Leave a cluster this run created running on destroy() (keepHint says how to remove it). Default false. */
  keep?: boolean;
  /** Rendered config and kubeconfig. Default <stateRoot>/kind/<name>. */
  stateDir?: string;
  /** Default: "kind-" + 6 hex digits. */
  runId?: string;
  /** Largest pressure fill written into a node. Default $REKINDLE_KIND_MAX_FILL, else 8 GiB. */
  maxFillBytes?: number;
  /** Sizes pressure fills. Default: kubelet stats summary − evictionHard threshold + margin. */
  fillPlanner?: FillPlanner;
  /** Exec'd in a node after startNode until it exits 0; null: do not wait. Default DEFAULT_AGENT_PROBE. */
  agentProbe?: readonly string[] | null;
  /** Default: testcontainers' getContainerRuntimeClient. */
  containerEngine?: RuntimeClientFactory;
  /** Install the rekindle-shared StorageClass and run its provisioner (needs the API server). Default true. */
  sharedStorage?: boolean;
  progress?: Progress;
  signal?: AbortSignal;
}

/** Everything a KindCluster needs; startKindCluster builds it, tests may build one over stand-ins. */
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
  agentProbe?: readonly string[] | null;
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
  readonly latencies = { ...KIND_LATENCIES };
  /** Shared hostPath volumes that can follow a pod to any worker (see shared-storage.ts). */
  readonly storage = { storageClass: SHARED_STORAGE_CLASS, attachRequired: false };
  #provisioner: { stop(): Promise<void> } | undefined;
  readonly eviction: EvictionSettings;
  readonly config: RenderedKindConfig;
  readonly kubeconfigPath: string | undefined;
  readonly created: boolean;
  readonly keep: boolean;
  readonly nodes: KindNodes;
  readonly cli: KindCli;
  readonly maxFillBytes: number;
  readonly #planner: FillPlanner;
  readonly #agentProbe: readonly string[] | null;
  readonly #progress: Progress;
  #kubeConfig: k8s.KubeConfig | undefined;
  #destroyed = false;
  #releaseInterrupt: (() => void) | undefined;

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
    this.unsupported = {
      // kind runs kube-controller-manager as a static pod; rewriting its manifest mid-run is not built yet.
      "controller-manager-flags":
        "restarting kube-controller-manager with other flags is not implemented for kind clusters yet",
      ...init.unsupported,
    };
    this.capabilities = offeredCapabilities(
      {
        lifecycle: this,
        partition: this,
        pressure: this,
        "graceful-shutdown": this,
        fencing: this,
      },
      this.unsupported,
    );
    this.maxFillBytes = init.maxFillBytes ?? defaultMaxFillBytes();
    this.#planner = init.fillPlanner ?? ((node, kind) => this.#planFromKubelet(node, kind));
    this.#agentProbe = init.agentProbe === undefined ? DEFAULT_AGENT_PROBE : init.agentProbe;
    this.#progress = init.progress ?? silentProgress;
    this.eviction = {
      pressureTransitionPeriodMs: init.config.kubelet.pressureTransitionPeriodMs,
      monitoringIntervalMs: KIND_MONITORING_INTERVAL_MS,
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
  async startStorage(): Promise<void> {
    if (this.#provisioner) return;
    const kc = this.kubeConfig();
    await installSharedStorageClass(kc);
    this.#provisioner = startSharedProvisioner(kc, (message) => {
      this.#progress.info(`[storage] ${message}`);
    });
  }

  async workerNodes(): Promise<string[]> {
    return this.nodes.workers();
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
   * docker stop with a timeout longer than the kubelet's shutdownGracePeriod: the engine sends
   * kindest/node's stop signal (SIGRTMIN+3), systemd halts in order, SIGKILL only after the timeout.
   */
  async shutdownNode(name: string): Promise<void> {
    const timeoutSeconds =
      Math.ceil(this.eviction.shutdownGracePeriodMs / 1000) + KIND_TIMEOUTS.shutdownExtraSeconds;
    await this.nodes.stop(await this.#worker(name), timeoutSeconds);
  }

  async #planFromKubelet(node: string, kind: PressureKind) {
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
    const stats = statsFor(await fetchSignalStats(this.kubeConfig(), node), kind);
    return planFill(kind, stats, parseThreshold(written));
  }

  /**
   * Writes a fill sized past the kubelet's evictionHard threshold (see pressure.ts). Idempotent:
   * a node that already carries this kind's fill is left as it is.
   */
  async applyPressure(name: string, kind: PressureKind): Promise<void> {
    await this.#worker(name);
    if (await hasFill(this.nodes, name, kind)) {
      this.#progress.info(`${kind} pressure on ${name}: already applied`);
      return;
    }
    const plan = await this.#planner(name, kind);
    checkFillCap(name, plan, this.maxFillBytes);
    await fillNode(this.nodes, name, kind, plan.fillBytes);
    this.#progress.info(`${kind} pressure on ${name}: wrote ${formatBytes(plan.fillBytes)} (${plan.signal})`);
  }

  /** Removes the fill (and the tmpfs); idempotent. */
  async relievePressure(name: string, kind: PressureKind): Promise<void> {
    await relieveNode(this.nodes, await this.#worker(name), kind);
  }

  /** $REKINDLE_KUBECTL, else kubectl on PATH (a kind run needs none otherwise). */
  kubectlPath(): string | undefined {
    return defaultKubectl();
  }

  fenceDriver(): FenceDriver {
    return new DockerFenceDriver();
  }

  /** Deletes the cluster if this run created it and keep is off; a reused cluster stays. */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#releaseInterrupt?.();
    await this.#provisioner?.stop();
    this.#provisioner = undefined;
    if (!this.created || this.keep) {
      this.#progress.info(this.keepHint());
      return;
    }
    const phase = this.#progress.phase(`deleting kind cluster ${this.name}`);
    await this.cli.run(kindArgs.deleteCluster(this.name, this.#kubeconfigFile()), {
      timeoutMs: KIND_TIMEOUTS.deleteMs,
    });
    phase.end("deleted");
  }

  #kubeconfigFile(): string {
    return this.kubeconfigPath ?? join(stateRoot(), "kind", this.name, "kubeconfig");
  }

  keepHint(): string {
    const reach = this.kubeconfigPath !== undefined ? `export KUBECONFIG=${this.kubeconfigPath}; ` : "";
    const remove = `kind delete cluster --name ${this.name}`;
    return this.created
      ? `kind cluster ${this.name} kept: ${reach}delete it with: ${remove}`
      : `kind cluster ${this.name} was reused and stays running: ${reach}delete it with: ${remove}`;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.destroy();
  }
}

/**
 * What kind nodes cannot do, found by looking at a worker: kindest/node installs systemd without
 * D-Bus, so systemd-logind is absent and the kubelet's graceful node shutdown never starts.
 */
export async function probeUnsupported(
  nodes: KindNodes,
  worker: string | undefined,
): Promise<Partial<Record<NodeCapability, string>>> {
  if (worker === undefined) return {};
  const bus = await nodes.exec(worker, ["test", "-S", SYSTEM_BUS_SOCKET]).catch(() => undefined);
  if (bus === undefined || bus.exitCode === 0) return {};
  return {
    "graceful-shutdown": `kind node ${worker} has no system D-Bus (${SYSTEM_BUS_SOCKET}), so systemd-logind cannot give the kubelet a shutdown inhibitor: docker stop halts the node in order but the kubelet does not terminate its pods first`,
  };
}

/**
 * A reused cluster keeps the knobs it was created with: warn when its kubelet's lease duration is
 * not the profile's (the expected timeline would be wrong). Quiet when the file cannot be read.
 */
export async function reusedLeaseMismatch(
  nodes: KindNodes,
  worker: string | undefined,
  profile: TimingProfile,
): Promise<string | undefined> {
  if (worker === undefined) return undefined;
  const result = await nodes.exec(worker, ["cat", KUBELET_CONFIG_PATH]).catch(() => undefined);
  if (result?.exitCode !== 0) return undefined;
  let lease: unknown;
  try {
    lease = (parse(result.output) as { nodeLeaseDurationSeconds?: unknown } | null)?.nodeLeaseDurationSeconds;
  } catch {
    return undefined;
  }
  if (typeof lease !== "number" || lease === profile.nodeLeaseDurationSeconds) return undefined;
  return `warning: reused kind cluster's kubelet on ${worker} has nodeLeaseDurationSeconds ${lease}, profile ${profile.name} expects ${profile.nodeLeaseDurationSeconds}; recreate it (kind delete cluster --name ${nodes.cluster}) for the profile's timings`;
}

function readSourceConfig(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new RekindleError("NOT_FOUND", `cannot read kind config ${path}`, {
      hint: `pass configPath pointing at a kind Cluster config (default ${DEFAULT_KIND_CONFIG})`,
      cause: error,
    });
  }
}

/**
 * Reuses kind cluster `name` when `kind get clusters` lists it, else creates it from the config
 * rendered for the profile (`kind create cluster --wait 5m`, minutes). Writes the kubeconfig from
 * `kind get kubeconfig` into the state directory.
 */
export async function startKindCluster(options: KindClusterOptions = {}): Promise<KindCluster> {
  const name = options.name ?? "rekindle";
  if (!NAME_PATTERN.test(name)) {
    throw RekindleError.invalidInput(
      "kind cluster name",
      name,
      "lowercase letters, digits and '-', at most 50",
    );
  }
  const profile = options.profile ?? TIMING_PROFILES.default;
  const progress = options.progress ?? silentProgress;
  const signal = options.signal;
  const stateDir = options.stateDir ?? join(stateRoot(), "kind", name);
  const engine = options.containerEngine ?? getContainerRuntimeClient;
  const cli = new KindCli(options.kindBinary !== undefined ? { binary: options.kindBinary } : {});

  await connectContainerEngine(engine); // a clear error now rather than kind's own later
  progress.info(`${await cli.version(signal)} (${cli.binary}); state in ${stateDir}`);
  const sourcePath = options.configPath ?? DEFAULT_KIND_CONFIG;
  const config = renderKindConfig(readSourceConfig(sourcePath), profile, { name, source: sourcePath });
  const configPath = writeKindConfig(config, stateDir);
  const kubeconfigPath = join(stateDir, "kubeconfig");

  const existing = await cli.clusters(signal);
  let created = false;
  if (existing.includes(name)) {
    if (options.reuse === false) {
      throw new RekindleError("CONFLICT", `kind cluster ${name} already exists and reuse is off`, {
        hint: `delete it (kind delete cluster --name ${name}), pick another name, or allow reuse`,
      });
    }
    progress.info(
      `reusing kind cluster ${name} (kind get clusters lists it); it keeps the timing knobs it was created with and stays running afterwards`,
    );
  } else {
    await createCluster(cli, { name, configPath, kubeconfigPath, config, profile, progress, signal });
    created = true;
  }

  try {
    writeFileSync(kubeconfigPath, await cli.kubeconfig(name, signal), { mode: 0o600 });
    const nodes = new KindNodes(name, engine);
    const firstWorker = (await nodes.workers())[0];
    const unsupported = await probeUnsupported(nodes, firstWorker);
    if (!created) {
      const mismatch = await reusedLeaseMismatch(nodes, firstWorker, profile);
      if (mismatch !== undefined) progress.info(mismatch);
    }
    const cluster = new KindCluster({
      name,
      runId: options.runId ?? `kind-${randomBytes(3).toString("hex")}`,
      profile,
      config,
      kubeconfigPath,
      created,
      keep: options.keep === true,
      cli,
      nodes,
      unsupported,
      ...(options.maxFillBytes !== undefined ? { maxFillBytes: options.maxFillBytes } : {}),
      ...(options.fillPlanner !== undefined ? { fillPlanner: options.fillPlanner } : {}),
      ...(options.agentProbe !== undefined ? { agentProbe: options.agentProbe } : {}),
      progress,
    });
    if (options.sharedStorage !== false) await cluster.startStorage();
    return cluster;
  } catch (error) {
    if (created && options.keep !== true) await deleteQuietly(cli, name, kubeconfigPath);
    throw error;
  }
}

async function createCluster(
  cli: KindCli,
  args: {
    name: string;
    configPath: string;
    kubeconfigPath: string;
    config: RenderedKindConfig;
    profile: TimingProfile;
    progress: Progress;
    signal: AbortSignal | undefined;
  },
): Promise<void> {
  const { name, configPath, kubeconfigPath, progress, signal } = args;
  const phase = progress.phase(
    `creating kind cluster ${name} (${args.config.workers} workers, profile ${args.profile.name}; takes minutes)`,
  );
  // Ctrl-C while kind works leaves a half-made cluster: delete it on the way out.
  const release = onInterrupt(() => deleteQuietly(cli, name, kubeconfigPath));
  try {
    await cli.run(kindArgs.createCluster(name, configPath, kubeconfigPath, KIND_TIMEOUTS.createWait), {
      ...(signal ? { signal } : {}),
      onLine: (line) => {
        if (line.trim() !== "") phase.update(line.trim());
      },
    });
    phase.end("created");
  } catch (error) {
    phase.end("failed");
    // kind removes what it made when it fails on its own, not when it is cancelled.
    await deleteQuietly(cli, name, kubeconfigPath);
    throw error;
  } finally {
    release();
  }
}

async function deleteQuietly(cli: KindCli, name: string, kubeconfigPath: string): Promise<void> {
  await cli
    .run(kindArgs.deleteCluster(name, kubeconfigPath), { timeoutMs: KIND_TIMEOUTS.deleteMs })
    .catch(() => undefined);
}
