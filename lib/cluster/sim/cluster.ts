// The sim provider's cluster: a real control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) built from source, kwok processes playing the workers' kubelets (one per worker,
// or shared by the fleet workers of a zone: kubelet/kwok-groups.ts), a kwok
// "attacher" playing the CSI external-attacher, and a small CSI provisioner. Stopping a node is
// SIGKILL of its kwok process: the Lease stops and the real controllers react as in a cluster.
// This class is the public face; each concept lives in its own file next to it (boot/boot.ts lists
// the boot steps, kubelet/node-power.ts plays power, boot/teardown.ts stops everything).
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../../errors.js";
import type { k8s } from "../../kube/client.js";
import { onInterrupt } from "../../util/cleanup.js";
import { Coalescer } from "../../util/coalesce.js";
import { freeLoopbackPorts, releaseLoopbackPorts } from "../../util/ports.js";
import { silentProgress, type Progress } from "../../util/progress.js";
import type { TimingProfile } from "../profiles.js";
import { pauseSimApiServer, resumeSimApiServer } from "./hostile/apiserver-pause.js";
import { bootSimCluster } from "./boot/boot.js";
import { ensureSimBinaries } from "../../build/sim-binaries.js";
import type { ControlPlanePorts } from "./boot/control-plane.js";
import type { ClockSkew } from "./hostile/clock-skew.js";
import { setSimClockSkew } from "./hostile/clock-webhook.js";
import { restartSimControllerManager } from "./hostile/controller-manager-restart.js";
import { prepareFreshRoot } from "./boot/fresh-root.js";
import { simLayout, type SimLayout } from "./boot/layout.js";
import {
  healSimNode,
  partitionSimNode,
  silenceSimNode,
  startSimNodes,
  stopSimNodes,
  type NodeBatchOptions,
} from "./kubelet/node-power.js";
import { waitForSimNodesReady } from "./boot/nodes-ready.js";
import { simClusterRoot, validateSimOptions, type SimClusterOptions } from "./boot/options.js";
import { SimSession } from "./boot/session.js";
import { reregisterSimNode, type Reregistration } from "./hostile/reregister.js";
import { readSimState, type SimClusterState } from "./boot/state.js";
import {
  nodeProcessRunning,
  nodeProcessRunningIn,
  simClusterStatus,
  type SimClusterStatus,
} from "./boot/status.js";
import { stopSimProcesses } from "./boot/teardown.js";
import { readyPollIntervalMs, scaledTimeoutMs, SIM_TIMEOUTS } from "./boot/timeouts.js";

// Names other files import from here, kept here since they moved next door.
export { SIM_DEFAULT_LATENCIES, simClusterRoot, zoneName, type SimClusterOptions } from "./boot/options.js";
export type { SimClusterStatus, SimComponentStatus, SimNodeStatus } from "./boot/status.js";
export type { ClockSkew } from "./hostile/clock-skew.js";
export type { Reregistration } from "./hostile/reregister.js";
export { SIM_CSI_DRIVER, SIM_STORAGE_CLASS } from "./kubelet/storage.js";

export class SimCluster implements AsyncDisposable {
  readonly layout: SimLayout;
  readonly #session: SimSession;
  readonly #stops = new Coalescer<string>((names) => stopSimNodes(this.#session, names));
  readonly #starts = new Coalescer<string>((names) => startSimNodes(this.#session, names));
  #releaseInterrupt: (() => void) | undefined;

  private constructor(state: SimClusterState, progress: Progress, detached: boolean) {
    this.#session = new SimSession(state, progress, detached);
    this.layout = this.#session.layout;
  }

  /** Boots a new cluster; on any failure everything started so far is stopped again. */
  static async start(options: SimClusterOptions = {}): Promise<SimCluster> {
    const validated = validateSimOptions(options);
    const { name, workers, zones, profile } = validated;
    const progress = options.progress ?? silentProgress;
    // The layout's root is absolute: the state file is read by processes in other directories.
    const { root } = simLayout(options.root ?? simClusterRoot(name));
    prepareFreshRoot(name, simLayout(root));

    const binaries =
      options.binaries ??
      (await ensureSimBinaries({ progress, ...(options.signal ? { signal: options.signal } : {}) }));
    const reserved = await freeLoopbackPorts(5);
    const [etcdClient, etcdPeer, apiserver, controllerManager, scheduler] = reserved;
    const ports: ControlPlanePorts = {
      etcdClient: etcdClient ?? 0,
      etcdPeer: etcdPeer ?? 0,
      apiserver: apiserver ?? 0,
      controllerManager: controllerManager ?? 0,
      scheduler: scheduler ?? 0,
    };
    const state: SimClusterState = {
      formatVersion: 1,
      name,
      runId: `${name}-${randomBytes(4).toString("hex")}`,
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
    cluster.#session.save();
    if (options.detach !== true) cluster.#releaseInterrupt = onInterrupt(() => cluster.destroy());
    const boot = progress.phase(
      `starting sim cluster "${name}" (${workers} workers in ${zones} zones, profile ${profile.name})`,
    );
    try {
      await bootSimCluster(cluster.#session, validated, options.signal);
      boot.end("ready");
      return cluster;
    } catch (error) {
      boot.end("failed; stopping what was started");
      await cluster.destroy({ keepFiles: true });
      throw error;
    } finally {
      // Bound by now (or never to be): other clusters may choose them again once this one is gone.
      releaseLoopbackPorts(reserved);
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
    return this.#session.state.name;
  }

  get runId(): string {
    return this.#session.state.runId;
  }

  get profile(): TimingProfile {
    return this.#session.profile;
  }

  get kubeconfigPath(): string {
    return this.layout.kubeconfig;
  }

  get apiserverUrl(): string {
    return this.#session.state.apiserverUrl;
  }

  get state(): Readonly<SimClusterState> {
    return this.#session.state;
  }

  kubeConfig(): k8s.KubeConfig {
    return this.#session.kubeConfig();
  }

  nodeNames(): string[] {
    return this.#session.state.nodes.map((n) => n.name);
  }

  zoneOf(nodeName: string): string {
    return this.#session.node(nodeName).zone;
  }

  status(): SimClusterStatus {
    this.#session.reload();
    return simClusterStatus(this.#session.state, this.layout);
  }

  /**
   * Whether the kwok that plays `nodeName` runs (its "power"), from the state as opened; undefined
   * for a node the cluster does not have. One node only: status() looks at every process, which a
   * fence driver asked for one node at a time on a large cluster cannot afford.
   */
  nodeRunning(nodeName: string): boolean | undefined {
    const { state } = this.#session;
    const node = state.nodes.find((n) => n.name === nodeName);
    return node === undefined ? undefined : nodeProcessRunning(state, node);
  }

  /** Whether `nodeName` is partitioned (its kwok frozen, the node on), from the state as opened. */
  nodePartitioned(nodeName: string): boolean {
    return this.#session.state.nodes.find((n) => n.name === nodeName)?.power === "partitioned";
  }

  /** The nodes whose kwok runs, from the state as opened (nodeRunning for every node, in one walk). */
  runningNodes(): Set<string> {
    const { state } = this.#session;
    const processRunning = nodeProcessRunningIn(state);
    return new Set(state.nodes.filter((node) => processRunning(node)).map((node) => node.name));
  }

  /**
   * Node loss: SIGKILL the node's kwok (or release it from its shared kwok). Its Lease stops
   * renewing; its pods are left as they are. Calls made together (a fault on many nodes at once)
   * run as one stopNodes: released by a thousand concurrent label patches, a quarter of the
   * nodes went on renewing their Leases from their shared kwoks (measured at 1000 workers: 254
   * of 998 still renewing 90 s later; batched, none). A released node no longer posts Ready once
   * minutes later: that was a delayed kwok Stage outliving the release (docs/design.md).
   */
  async stopNode(nodeName: string): Promise<void> {
    await this.#stops.add(nodeName);
  }

  /**
   * The node comes back: a powered-off node boots (SIM_NODE_BOOT_MS), then a fresh kwok process
   * plays it, its Lease holder cleared so it renews at once (calls made together run as one
   * startNodes, booting together).
   */
  async startNode(nodeName: string): Promise<void> {
    await this.#starts.add(nodeName);
  }

  /**
   * Several nodes lost in one event (a zone outage): stopNode for each, shared-kwok nodes' label
   * patches several at once and the state file written once, so a third of a thousand-node fleet
   * goes down within a few seconds, not a minute. `onEach` is told as each node is stopped.
   */
  async stopNodes(nodeNames: readonly string[], options?: NodeBatchOptions): Promise<void> {
    await stopSimNodes(this.#session, nodeNames, options);
  }

  /** Several nodes come back at once (one boot for all; shared-kwok nodes batched as stopNodes). */
  async startNodes(nodeNames: readonly string[], options?: NodeBatchOptions): Promise<void> {
    await startSimNodes(this.#session, nodeNames, options);
  }

  /**
   * Restarts kube-controller-manager with `extraFlags` after its usual ones (none: as booted), and
   * waits until it is healthy. Its controllers rebuild their state from the API, as after a
   * leader change; the log file is appended to.
   */
  async restartControllerManager(extraFlags: readonly string[], signal?: AbortSignal): Promise<void> {
    await restartSimControllerManager(this.#session, extraFlags, signal);
  }

  /** The kube-controller-manager log (kept after teardown). */
  get controllerManagerLogPath(): string {
    return join(this.layout.logsDir, "kube-controller-manager.log");
  }

  /**
   * The node's kwok stops writing while the node stays on (recorded running): a graceful shutdown's
   * start, whose kubelet the caller plays until stopNode powers the node off (kubelet/shutdown.ts).
   */
  async silenceNode(nodeName: string): Promise<void> {
    await silenceSimNode(this.#session, nodeName);
  }

  /** A partition that can heal: SIGSTOP freezes the node's kwok (no Lease renewals, no pod updates). */
  async partitionNode(nodeName: string): Promise<void> {
    await partitionSimNode(this.#session, nodeName);
  }

  async healNode(nodeName: string): Promise<void> {
    await healSimNode(this.#session, nodeName);
  }

  /**
   * Skews the clock of the node's kubelet (`skew`), or makes it true again (undefined or offset 0):
   * its Lease renewTime and node heartbeat times are written from its own clock. Takes effect at
   * the node's next renewal; see hostile/clock-skew.ts for how and where a real kubelet would differ.
   */
  async setClockSkew(nodeName: string, skew: ClockSkew | undefined, signal?: AbortSignal): Promise<void> {
    await setSimClockSkew(this.#session, nodeName, skew, signal);
  }

  /** The skewed nodes' clocks, by node name (from the state file). */
  clockSkews(): Readonly<Record<string, ClockSkew>> {
    this.#session.reload();
    return { ...this.#session.state.clock?.skews };
  }

  /**
   * Freezes kube-apiserver (SIGSTOP) for `durationMs` and continues it (SIGCONT); resolves once it
   * is continued. Aborting `signal` ends the pause at once (and rejects).
   */
  async pauseApiServer(durationMs: number, signal?: AbortSignal): Promise<void> {
    await pauseSimApiServer(this.#session, durationMs, signal);
  }

  /** Continues a paused kube-apiserver (after an interrupted pause); false if it was not paused. */
  resumeApiServer(): boolean {
    return resumeSimApiServer(this.#session);
  }

  /**
   * Deletes the node's Node object and registers it again under the same name with a new UID, as a
   * reinstalled machine does; resolves once its new kwok runs (hostile/reregister.ts: what happens to its
   * Lease and pods).
   */
  async reregisterNode(nodeName: string, signal?: AbortSignal): Promise<Reregistration> {
    return reregisterSimNode(this.#session, nodeName, signal);
  }

  /** Waits until every node whose kwok runs reports Ready=True and carries no not-ready taint. */
  async waitForNodesReady(
    timeoutMs: number = SIM_TIMEOUTS.nodesReadyMs,
    signal?: AbortSignal,
  ): Promise<void> {
    await waitForSimNodesReady(this.#session, timeoutMs, signal);
  }

  /**
   * With shared-kwok workers: waits until every running node is Ready, so every zone is Normal to
   * the node lifecycle controller before a fault (nodes register before their kwok starts, and a
   * returning fleet node takes a moment). Without them (every small cluster): returns at once.
   */
  async waitForZonesNormal(signal?: AbortSignal): Promise<void> {
    this.#session.reload();
    if ((this.#session.state.kwokGroups ?? []).length === 0) return;
    const workers = this.#session.state.nodes.length;
    await waitForSimNodesReady(this.#session, scaledTimeoutMs(SIM_TIMEOUTS.nodesReadyMs, workers), signal, {
      intervalMs: readyPollIntervalMs(workers),
    });
  }

  /**
   * Stops every process of this cluster (kwok first, etcd last), including any stray one that
   * carries the cluster's run tag, and removes its data unless `keepFiles` (logs always stay).
   */
  async destroy(options: { keepFiles?: boolean } = {}): Promise<void> {
    this.#releaseInterrupt?.();
    this.#releaseInterrupt = undefined;
    await stopSimProcesses(this.#session, options);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.destroy();
  }
}
