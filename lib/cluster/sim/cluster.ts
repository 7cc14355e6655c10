// The sim provider's cluster: a real control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) built from source, one kwok process per worker playing its kubelet, a kwok
// "attacher" playing the CSI external-attacher, and a small CSI provisioner. Stopping a node is
// SIGKILL of its kwok process: the Lease stops and the real controllers react as in a cluster.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../../errors.js";
import { applyManifestFile, RUN_LABEL, substitute } from "../../kube/apply.js";
import { k8s, isNotFound, loadKubeConfig, nodeConditionStatus } from "../../kube/client.js";
import { writeKubeconfig } from "../../kube/kubeconfig.js";
import { hasTaint, NOT_READY_TAINT } from "../../kube/queries.js";
import { trackProcess, untrackProcess, onInterrupt } from "../../util/cleanup.js";
import {
  findProcessesByRunTag,
  isDaemonRunning,
  logTail,
  signalDaemon,
  spawnDaemon,
  stopDaemon,
  type DaemonRecord,
  type DaemonSpec,
} from "../../util/daemon.js";
import { fixturePath, nodeEntryCommand } from "../../util/fixtures.js";
import { httpGet } from "../../util/http.js";
import { stateRoot } from "../../util/paths.js";
import { freeLoopbackPorts } from "../../util/ports.js";
import { silentProgress, type Progress } from "../../util/progress.js";
import { pollUntil } from "../../util/time.js";
import { timingProfile, type TimingProfile } from "../profiles.js";
import { ensureSimBinaries, type SimBinaries } from "./build.js";
import {
  apiserverSpec,
  controllerManagerSpec,
  etcdSpec,
  schedulerSpec,
  type ControlPlanePorts,
} from "./control-plane.js";
import { simLayout, type SimLayout } from "./layout.js";
import { SIM_IDENTITIES, writeSimCredentials, type SimIdentityName } from "./pki.js";
import {
  readSimState,
  writeSimState,
  type SimClusterState,
  type SimNodePower,
  type SimNodeState,
} from "./state.js";
import { SIM_TIMEOUTS } from "./timeouts.js";

/** The CSI driver the sim storage plays. */
export const SIM_CSI_DRIVER = "sim.csi.rekindle.dev";
/** Simulated container start and CSI attach latency unless SimClusterOptions say otherwise. */
export const SIM_DEFAULT_LATENCIES = { podStartMs: 1000, attachMs: 500 } as const;
/** The StorageClass of fixtures/sim/storage.yaml (the cluster's default). */
export const SIM_STORAGE_CLASS = "rekindle-sim";
/** A node name no Node ever has: the attacher kwok process manages nothing but VolumeAttachments. */
const ATTACHER_NODE_SELECTOR = "rekindle-attacher-manages-no-node";

export interface SimClusterOptions {
  /** Cluster name (DNS label). Default "rekindle". Also the default state directory's name. */
  name?: string;
  /** Worker nodes. Default 3. */
  workers?: number;
  /** Zones the workers are spread over, round-robin (zone-a, zone-b, …). Default 2. */
  zones?: number;
  /** Timing profile name. Default "default" (upstream numbers). */
  profile?: string;
  /** Directory for state, credentials, etcd data and logs. Default <stateRoot>/sim/<name>. */
  root?: string;
  /** Prebuilt binaries. Default: the build cache, building what is missing. */
  binaries?: SimBinaries;
  /** Simulated container start latency. Default 1000 ms. */
  podStartMs?: number;
  /** Simulated attach latency of the CSI attacher. Default 500 ms. */
  attachMs?: number;
  /**
   * false (default): every process is killed when this Node process exits or is interrupted.
   * true: processes keep running (the CLI's `sim up`); `sim down` stops them.
   */
  detach?: boolean;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface SimComponentStatus {
  name: string;
  pid: number;
  running: boolean;
  log: string;
}

export interface SimNodeStatus {
  name: string;
  zone: string;
  power: SimNodePower;
  processRunning: boolean;
}

export interface SimClusterStatus {
  name: string;
  runId: string;
  profile: string;
  apiserverUrl: string;
  kubeconfig: string;
  components: SimComponentStatus[];
  nodes: SimNodeStatus[];
}

const NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/;

export function simClusterRoot(name: string): string {
  return join(stateRoot(), "sim", name);
}

function validateOptions(options: SimClusterOptions): {
  name: string;
  workers: number;
  zones: number;
  profile: TimingProfile;
} {
  const name = options.name ?? "rekindle";
  if (!NAME_PATTERN.test(name)) {
    throw RekindleError.invalidInput(
      "cluster name",
      name,
      "a DNS label: lowercase letters, digits and '-', at most 40 characters",
    );
  }
  const workers = options.workers ?? 3;
  if (!Number.isInteger(workers) || workers < 1 || workers > 100) {
    throw RekindleError.invalidInput("worker count", options.workers, "a whole number from 1 to 100");
  }
  const zones = options.zones ?? Math.min(2, workers);
  if (!Number.isInteger(zones) || zones < 1 || zones > workers) {
    throw RekindleError.invalidInput(
      "zone count",
      options.zones,
      `a whole number from 1 to the worker count (${workers})`,
    );
  }
  return { name, workers, zones, profile: timingProfile(options.profile ?? "default") };
}

export function zoneName(index: number): string {
  return `zone-${String.fromCharCode("a".charCodeAt(0) + (index % 26))}`;
}

export class SimCluster implements AsyncDisposable {
  readonly layout: SimLayout;
  #state: SimClusterState;
  readonly #progress: Progress;
  #kc: k8s.KubeConfig | undefined;
  #releaseInterrupt: (() => void) | undefined;
  /** Whether processes this object starts outlive this Node process. */
  readonly #detached: boolean;

  private constructor(state: SimClusterState, progress: Progress, detached: boolean) {
    this.#state = state;
    this.layout = simLayout(state.root);
    this.#progress = progress;
    this.#detached = detached;
  }

  /** Boots a new cluster; on any failure everything started so far is stopped again. */
  static async start(options: SimClusterOptions = {}): Promise<SimCluster> {
    const { name, workers, zones, profile } = validateOptions(options);
    const progress = options.progress ?? silentProgress;
    const root = options.root ?? simClusterRoot(name);
    const layout = simLayout(root);
    if (existsSync(layout.stateFile)) {
      const previous = readSimState(layout.stateFile);
      const alive = [
        ...previous.components,
        ...previous.nodes.flatMap((n) => (n.process ? [n.process] : [])),
      ].filter(isDaemonRunning);
      if (alive.length > 0) {
        throw new RekindleError(
          "STATE",
          `sim cluster "${name}" is already running (${alive.length} processes, state in ${root})`,
          {
            hint: `use it (kubeconfig ${layout.kubeconfig}), stop it with \`rekindle sim down --name ${name}\`, or pick another --name`,
          },
        );
      }
    }
    rmSync(root, { recursive: true, force: true });
    mkdirSync(layout.logsDir, { recursive: true });
    mkdirSync(layout.kwokDir, { recursive: true });

    const binaries =
      options.binaries ??
      (await ensureSimBinaries({ progress, ...(options.signal ? { signal: options.signal } : {}) }));
    const [etcdClient, etcdPeer, apiserver, controllerManager, scheduler] = await freeLoopbackPorts(5);
    const ports: ControlPlanePorts = {
      etcdClient: etcdClient ?? 0,
      etcdPeer: etcdPeer ?? 0,
      apiserver: apiserver ?? 0,
      controllerManager: controllerManager ?? 0,
      scheduler: scheduler ?? 0,
    };
    const runId = `${name}-${randomBytes(4).toString("hex")}`;
    const state: SimClusterState = {
      formatVersion: 1,
      name,
      runId,
      profile: profile.name,
      createdAt: new Date().toISOString(),
      root,
      apiserverUrl: `https://127.0.0.1:${ports.apiserver}`,
      binaries,
      ports,
      components: [],
      nodes: [],
    };
    const cluster = new SimCluster(state, progress, options.detach === true);
    cluster.#save();
    if (options.detach !== true) cluster.#releaseInterrupt = onInterrupt(() => cluster.destroy());
    const boot = progress.phase(
      `starting sim cluster "${name}" (${workers} workers in ${zones} zones, profile ${profile.name})`,
    );
    try {
      await cluster.#boot({ workers, zones, profile, options });
      boot.end("ready");
      return cluster;
    } catch (error) {
      boot.end("failed; stopping what was started");
      await cluster.destroy({ keepFiles: true });
      throw error;
    }
  }

  /** Attaches to a cluster started earlier (possibly by another process), by name or state directory. */
  static open(nameOrRoot: string, progress: Progress = silentProgress): SimCluster {
    const root = nameOrRoot.includes("/") ? nameOrRoot : simClusterRoot(nameOrRoot);
    const layout = simLayout(root);
    if (!existsSync(layout.stateFile)) {
      throw new RekindleError("NOT_FOUND", `no sim cluster "${nameOrRoot}" (no state in ${root})`, {
        hint: "start one with `rekindle sim up`, or pass the --name it was started with",
      });
    }
    // Opened from state (the CLI): what it starts keeps running, like the cluster itself.
    return new SimCluster(readSimState(layout.stateFile), progress, true);
  }

  get name(): string {
    return this.#state.name;
  }

  get runId(): string {
    return this.#state.runId;
  }

  get profile(): TimingProfile {
    return timingProfile(this.#state.profile);
  }

  get kubeconfigPath(): string {
    return this.layout.kubeconfig;
  }

  get apiserverUrl(): string {
    return this.#state.apiserverUrl;
  }

  get state(): Readonly<SimClusterState> {
    return this.#state;
  }

  kubeConfig(): k8s.KubeConfig {
    this.#kc ??= loadKubeConfig(this.layout.kubeconfig);
    return this.#kc;
  }

  nodeNames(): string[] {
    return this.#state.nodes.map((n) => n.name);
  }

  zoneOf(nodeName: string): string {
    return this.#node(nodeName).zone;
  }

  status(): SimClusterStatus {
    this.#reload();
    return {
      name: this.#state.name,
      runId: this.#state.runId,
      profile: this.#state.profile,
      apiserverUrl: this.#state.apiserverUrl,
      kubeconfig: this.layout.kubeconfig,
      components: this.#state.components.map((c) => ({
        name: c.name,
        pid: c.pid,
        running: isDaemonRunning(c),
        log: c.logPath,
      })),
      nodes: this.#state.nodes.map((n) => ({
        name: n.name,
        zone: n.zone,
        power: n.power,
        processRunning: n.process !== undefined && isDaemonRunning(n.process),
      })),
    };
  }

  /** Node loss: SIGKILL the node's kwok. Its Lease stops renewing; its pods are left as they are. */
  stopNode(nodeName: string): void {
    this.#reload();
    const node = this.#node(nodeName);
    if (node.process) {
      signalDaemon(node.process, "SIGKILL");
      untrackProcess(node.name);
    }
    node.process = undefined;
    node.power = "stopped";
    this.#save();
    this.#progress.info(`node ${nodeName}: stopped (kwok killed)`);
  }

  /**
   * The node comes back: a fresh kwok process. A real kubelet keeps its Lease identity across
   * restarts; kwok draws a new one, so the stale holder is cleared first to renew at once.
   */
  async startNode(nodeName: string): Promise<void> {
    this.#reload();
    const node = this.#node(nodeName);
    if (node.power === "partitioned") {
      this.healNode(nodeName);
      return;
    }
    if (node.process && isDaemonRunning(node.process)) return;
    await this.#releaseLease(nodeName);
    node.process = this.#spawn(node.kwok, node.name);
    node.power = "running";
    this.#save();
    this.#progress.info(`node ${nodeName}: started (kwok pid ${node.process.pid})`);
  }

  /**
   * Restarts kube-controller-manager with `extraFlags` after its usual ones (none: as booted), and
   * waits until it is healthy. Its controllers rebuild their state from the API, as after a
   * leader change; the log file is appended to.
   */
  async restartControllerManager(extraFlags: readonly string[], signal?: AbortSignal): Promise<void> {
    const index = this.#state.components.findIndex((c) => c.name === "kube-controller-manager");
    const old = this.#state.components[index];
    if (!old)
      throw new RekindleError("STATE", `sim cluster ${this.#state.name} has no kube-controller-manager`);
    await stopDaemon(old, SIM_TIMEOUTS.componentStopGraceMs);
    untrackProcess(old.name);
    const spec = controllerManagerSpec(this.#state.binaries, this.layout, this.#state.ports, this.profile);
    const record = this.#spawn({ ...spec, args: [...spec.args, ...extraFlags] }, spec.name);
    this.#state.components[index] = record;
    this.#save();
    this.#progress.info(
      `kube-controller-manager restarted${extraFlags.length > 0 ? ` with ${extraFlags.join(" ")}` : " with its usual flags"}`,
    );
    await this.#waitHealthy(record, SIM_TIMEOUTS.controllerReadyMs, signal, () =>
      this.#controllerManagerHealthy(),
    );
  }

  /** The kube-controller-manager log (kept after teardown). */
  get controllerManagerLogPath(): string {
    return join(this.layout.logsDir, "kube-controller-manager.log");
  }

  async #controllerManagerHealthy(): Promise<boolean> {
    const url = `https://127.0.0.1:${this.#state.ports.controllerManager}/healthz`;
    return (await httpGet(url, { insecure: true })).status === 200;
  }

  /** A partition that can heal: SIGSTOP freezes the node's kwok (no Lease renewals, no pod updates). */
  partitionNode(nodeName: string): void {
    this.#reload();
    const node = this.#node(nodeName);
    if (!node.process || !signalDaemon(node.process, "SIGSTOP")) {
      throw new RekindleError("STATE", `node ${nodeName} cannot be partitioned: it is ${node.power}`, {
        hint: `start it first: rekindle sim node start ${nodeName}`,
      });
    }
    node.power = "partitioned";
    this.#save();
    this.#progress.info(`node ${nodeName}: partitioned (kwok stopped with SIGSTOP)`);
  }

  healNode(nodeName: string): void {
    this.#reload();
    const node = this.#node(nodeName);
    if (node.power !== "partitioned" || !node.process) {
      throw new RekindleError("STATE", `node ${nodeName} is not partitioned (it is ${node.power})`);
    }
    signalDaemon(node.process, "SIGCONT");
    node.power = "running";
    this.#save();
    this.#progress.info(`node ${nodeName}: healed (kwok continued)`);
  }

  /** Waits until every node whose kwok runs reports Ready=True and carries no not-ready taint. */
  async waitForNodesReady(
    timeoutMs: number = SIM_TIMEOUTS.nodesReadyMs,
    signal?: AbortSignal,
  ): Promise<void> {
    const core = this.kubeConfig().makeApiClient(k8s.CoreV1Api);
    const wanted = this.#state.nodes.filter((n) => n.power === "running").map((n) => n.name);
    await pollUntil(
      async () => {
        const list = await core.listNode();
        // Ready, and the node lifecycle controller has lifted its registration-time not-ready
        // taint: until then nothing schedules there.
        const ready = new Set(
          list.items
            .filter((n) => nodeConditionStatus(n, "Ready") === "True" && !hasTaint(n, NOT_READY_TAINT))
            .map((n) => n.metadata?.name),
        );
        return wanted.every((n) => ready.has(n)) ? true : undefined;
      },
      {
        what: `nodes ${wanted.join(", ")} to be Ready`,
        timeoutMs,
        intervalMs: 500,
        ...(signal ? { signal } : {}),
        onWait: (ms) => {
          this.#progress.info(`waiting for nodes Ready (${Math.round(ms / 1000)}s)`);
        },
      },
    );
  }

  /**
   * Stops every process of this cluster (kwok first, etcd last), including any stray one that
   * carries the cluster's run tag, and removes its data unless `keepFiles` (logs always stay).
   */
  async destroy(options: { keepFiles?: boolean } = {}): Promise<void> {
    this.#releaseInterrupt?.();
    this.#releaseInterrupt = undefined;
    this.#reload();
    const nodes = this.#state.nodes.flatMap((n) => (n.process ? [n.process] : []));
    await Promise.all(nodes.map((p) => stopDaemon(p, SIM_TIMEOUTS.componentStopGraceMs)));
    for (const component of [...this.#state.components].reverse()) {
      await stopDaemon(component, SIM_TIMEOUTS.componentStopGraceMs);
    }
    for (const pid of findProcessesByRunTag(this.#state.runId)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
    for (const n of this.#state.nodes) {
      untrackProcess(n.name);
      n.process = undefined;
      n.power = "stopped";
    }
    for (const c of this.#state.components) untrackProcess(c.name);
    this.#state.components = [];
    if (existsSync(this.layout.root)) this.#save();
    if (options.keepFiles !== true) {
      rmSync(this.layout.etcdDataDir, { recursive: true, force: true });
      rmSync(this.layout.pkiDir, { recursive: true, force: true });
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.destroy();
  }

  // --- boot ---------------------------------------------------------------------------------

  async #boot(args: {
    workers: number;
    zones: number;
    profile: TimingProfile;
    options: SimClusterOptions;
  }): Promise<void> {
    const { layout } = this;
    const state = this.#state;
    const { profile, options } = args;
    const signal = options.signal;
    const tokens = writeSimCredentials(layout);
    const kubeconfigFor = (identity: SimIdentityName, path: string): void => {
      writeKubeconfig(path, {
        clusterName: state.name,
        server: state.apiserverUrl,
        certificateAuthority: layout.apiserverCertificate,
        user: SIM_IDENTITIES[identity].user,
        token: tokens[identity],
      });
    };
    kubeconfigFor("admin", layout.kubeconfig);
    for (const identity of ["kube-controller-manager", "kube-scheduler", "kwok", "sim-csi"] as const) {
      kubeconfigFor(identity, layout.componentKubeconfig(identity));
    }

    const etcd = this.#startComponent(etcdSpec(state.binaries, layout, state.ports));
    await this.#waitHealthy(etcd, SIM_TIMEOUTS.etcdReadyMs, signal, async () => {
      const res = await httpGet(`http://127.0.0.1:${state.ports.etcdClient}/health`);
      return res.status === 200 && res.body.includes('"true"');
    });

    const apiserver = this.#startComponent(apiserverSpec(state.binaries, layout, state.ports, profile));
    await this.#waitHealthy(apiserver, SIM_TIMEOUTS.apiserverReadyMs, signal, async () => {
      if (!existsSync(layout.apiserverCertificate)) return false;
      const res = await httpGet(`${state.apiserverUrl}/readyz`, {
        ca: readFileSync(layout.apiserverCertificate),
        bearerToken: tokens.admin,
      });
      return res.status === 200;
    });

    const kcm = this.#startComponent(controllerManagerSpec(state.binaries, layout, state.ports, profile));
    const scheduler = this.#startComponent(schedulerSpec(state.binaries, layout, state.ports));
    // Their serving certs are throwaway self-signed ones made in memory; only /healthz is read.
    await Promise.all([
      this.#waitHealthy(kcm, SIM_TIMEOUTS.controllerReadyMs, signal, () => this.#controllerManagerHealthy()),
      this.#waitHealthy(scheduler, SIM_TIMEOUTS.controllerReadyMs, signal, async () => {
        return (
          (await httpGet(`https://127.0.0.1:${state.ports.scheduler}/healthz`, { insecure: true })).status ===
          200
        );
      }),
    ]);

    const kc = this.kubeConfig();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const phase = this.#progress.phase("bootstrapping cluster objects");
    // Pods are refused until the default ServiceAccount exists; wait for it alongside the nodes.
    const serviceAccount = pollUntil(
      async () => {
        try {
          await core.readNamespacedServiceAccount({ name: "default", namespace: "default" });
          return true;
        } catch (error) {
          if (isNotFound(error)) return undefined;
          throw error;
        }
      },
      {
        what: "the default ServiceAccount",
        timeoutMs: SIM_TIMEOUTS.defaultServiceAccountMs,
        ...(signal ? { signal } : {}),
      },
    );
    // Settled below; this only keeps an early rejection from counting as unhandled.
    serviceAccount.catch(() => undefined);
    await applyManifestFile(kc, fixturePath("sim", "storage.yaml"), {
      labels: { [RUN_LABEL]: state.runId },
      substitutions: { CSI_DRIVER: SIM_CSI_DRIVER },
    });
    const substitutions = {
      KUBELET_VERSION: state.binaries.versions.kubernetes,
      KWOK_VERSION: state.binaries.versions.kwok,
      POD_START_MS: String(options.podStartMs ?? SIM_DEFAULT_LATENCIES.podStartMs),
      ATTACH_MS: String(options.attachMs ?? SIM_DEFAULT_LATENCIES.attachMs),
      CSI_DRIVER: SIM_CSI_DRIVER,
    };
    const nodeStages = join(layout.kwokDir, "node-stages.yaml");
    const attacherStages = join(layout.kwokDir, "attacher-stages.yaml");
    writeFileSync(
      nodeStages,
      ["node-stages.yaml", "pod-stages.yaml"]
        .map((f) => substitute(readFileSync(fixturePath("sim", "kwok", f), "utf8"), substitutions))
        .join("\n---\n"),
    );
    writeFileSync(
      attacherStages,
      substitute(readFileSync(fixturePath("sim", "kwok", "attacher-stages.yaml"), "utf8"), substitutions),
    );

    for (let i = 0; i < args.workers; i++) {
      const name = `worker-${i + 1}`;
      const zone = zoneName(i % args.zones);
      await core.createNode({ body: this.#nodeObject(name, zone, i) });
      state.nodes.push({
        name,
        zone,
        kwok: this.#kwokSpec(name, i, profile, nodeStages),
        process: undefined,
        power: "stopped",
      });
    }
    phase.end(`${args.workers} nodes registered`);

    const csi = nodeEntryCommand(import.meta.url, "./csi-main");
    this.#startComponent({
      name: "sim-csi",
      command: csi.command,
      args: [
        ...csi.args,
        `--kubeconfig=${layout.componentKubeconfig("sim-csi")}`,
        `--driver=${SIM_CSI_DRIVER}`,
        `--state=${layout.stateFile}`,
      ],
      logPath: join(layout.logsDir, "sim-csi.log"),
    });
    this.#startComponent({
      name: "kwok-attacher",
      command: state.binaries.kwok,
      args: [
        `--kubeconfig=${layout.componentKubeconfig("kwok")}`,
        `--manage-single-node=${ATTACHER_NODE_SELECTOR}`,
        `--config=${attacherStages}`,
      ],
      env: { KWOK_WORKDIR: join(layout.kwokDir, "attacher") },
      logPath: join(layout.logsDir, "kwok-attacher.log"),
    });
    for (const node of state.nodes) {
      node.process = this.#spawn(node.kwok, node.name);
      node.power = "running";
    }
    this.#save();
    const ready = this.#progress.phase("waiting for nodes Ready and the default ServiceAccount");
    await Promise.all([this.waitForNodesReady(SIM_TIMEOUTS.nodesReadyMs, signal), serviceAccount]);
    ready.end();
  }

  #nodeObject(name: string, zone: string, index: number): k8s.V1Node {
    return {
      metadata: {
        name,
        labels: {
          "kubernetes.io/hostname": name,
          "kubernetes.io/os": "linux",
          "kubernetes.io/arch": "amd64",
          "node-role.kubernetes.io/worker": "",
          "topology.kubernetes.io/region": "sim",
          "topology.kubernetes.io/zone": zone,
          type: "kwok",
          [RUN_LABEL]: this.#state.runId,
        },
        annotations: {
          "kwok.x-k8s.io/node": "fake",
          "node.alpha.kubernetes.io/ttl": "0",
          // Without it the attach-detach controller creates no VolumeAttachment for this node.
          "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        },
      },
      spec: {
        providerID: `kwok://${name}`,
        // Distinct pod CIDRs keep kwok's per-process IP pools from handing out the same pod IPs.
        podCIDR: `10.244.${index}.0/24`,
        podCIDRs: [`10.244.${index}.0/24`],
      },
    };
  }

  #kwokSpec(name: string, index: number, profile: TimingProfile, stagesFile: string): DaemonSpec {
    return {
      name: `kwok-${name}`,
      command: this.#state.binaries.kwok,
      args: [
        `--kubeconfig=${this.layout.componentKubeconfig("kwok")}`,
        `--manage-single-node=${name}`,
        `--node-lease-duration-seconds=${profile.nodeLeaseDurationSeconds}`,
        `--config=${stagesFile}`,
        // A loopback address: nothing ever connects to it, and if something did it stays on this machine.
        `--node-ip=127.0.1.${index + 1}`,
        `--node-name=${name}`,
      ],
      // kwok always reads $KWOK_WORKDIR/kwok.yaml when present: keep it away from the user's ~/.kwok.
      env: { KWOK_WORKDIR: join(this.layout.kwokDir, name) },
      logPath: join(this.layout.logsDir, `kwok-${name}.log`),
    };
  }

  #spawn(spec: DaemonSpec, key: string): DaemonRecord {
    mkdirSync(spec.env?.["KWOK_WORKDIR"] ?? this.layout.kwokDir, { recursive: true });
    const record = spawnDaemon(spec, this.#state.runId);
    if (!this.#detached) trackProcess(key, record);
    return record;
  }

  #startComponent(spec: DaemonSpec): DaemonRecord {
    const record = this.#spawn(spec, spec.name);
    this.#state.components.push(record);
    this.#save();
    return record;
  }

  async #waitHealthy(
    record: DaemonRecord,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    healthy: () => Promise<boolean>,
  ): Promise<void> {
    const phase = this.#progress.phase(`starting ${record.name}`);
    try {
      await pollUntil(
        async () => {
          if (!isDaemonRunning(record)) {
            throw new RekindleError("PROCESS_EXITED", `${record.name} exited during startup`, {
              details: {
                log: record.logPath,
                outputTail: logTail(record.logPath),
                command: [record.command, ...record.args].join(" "),
              },
            });
          }
          try {
            return (await healthy()) ? true : undefined;
          } catch {
            return undefined; // Not listening yet.
          }
        },
        {
          what: `${record.name} to become healthy`,
          timeoutMs,
          intervalMs: 200,
          ...(signal ? { signal } : {}),
        },
      );
      phase.end(`healthy (pid ${record.pid})`);
    } catch (error) {
      phase.end("failed");
      if (error instanceof RekindleError && error.code === "TIMEOUT") {
        throw new RekindleError("TIMEOUT", error.message, {
          details: { log: record.logPath, outputTail: logTail(record.logPath) },
          cause: error,
        });
      }
      throw error;
    }
  }

  async #releaseLease(nodeName: string): Promise<void> {
    const coordination = this.kubeConfig().makeApiClient(k8s.CoordinationV1Api);
    try {
      await coordination.patchNamespacedLease(
        { name: nodeName, namespace: "kube-node-lease", body: { spec: { holderIdentity: null } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  #node(nodeName: string): SimNodeState {
    const node = this.#state.nodes.find((n) => n.name === nodeName);
    if (!node) throw RekindleError.invalidInput("node", nodeName, this.nodeNames());
    return node;
  }

  #save(): void {
    writeSimState(this.layout.stateFile, this.#state);
  }

  /** The state file is the truth: another process (the CLI, a fence driver) may have changed nodes. */
  #reload(): void {
    if (existsSync(this.layout.stateFile)) this.#state.nodes = readSimState(this.layout.stateFile).nodes;
  }
}
