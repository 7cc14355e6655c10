// Fences a sim node by stopping the kwok that plays it (the node's "power"); confirmed when none
// does. Power losses are heard by watching the cluster's state file (watchPowerLoss), as a BMC's
// power events would be: a node is recorded stopped when its power goes, which for a graceful
// shutdown is at its end, once the kubelet's last words are said (kubelet/shutdown.ts). Both take the time
// kind's docker driver takes (docs/calibration.md): the sim stands for it in the calibration.
// Its BMC may be told to lie (bmc-lies.ts): power reads "off", a power-off that does nothing; power
// losses are still heard as they happen (the notices are the machine's, and only a hint).
import { statSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { watch } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { SimCluster } from "./cluster.js";
import { simLayout } from "./boot/layout.js";
import type {
  FenceDriver,
  FenceTarget,
  PowerLossNotice,
  PowerState,
  PowerWatchOptions,
} from "../../controller/drivers/types.js";
import { errorMessage } from "../../errors.js";
import { BmcLies } from "../bmc-lies.js";
import { keepWatching } from "../../util/keep-watching.js";

/**
 * From a node's power loss to its notice: kind's docker driver hears of a stopped node from the
 * engine's `die` event, which came 0.7–0.9 s after the kill (node-loss/controller, 5 runs,
 * 2026-11-26); a BMC's power event takes its own time to reach a subscriber too.
 */
export const SIM_POWER_LOSS_NOTICE_MS = 800;
/**
 * Powering off a partitioned (frozen) node: the docker driver SIGKILLs a paused container's
 * processes and has the engine thaw and kill it (kind/frozen-kill.ts), 0.9–1.3 s from the fence's
 * start to its power-off (partition/healed-after-fence, 5 runs, 2026-11-26); a running or stopped
 * node goes within 0.1 s on both.
 */
export const SIM_FROZEN_POWER_OFF_MS = 1_000;

export interface SimFenceDriverOptions {
  /** Delay of a power-loss notice (ms). Default SIM_POWER_LOSS_NOTICE_MS. */
  noticeDelayMs?: number;
  /** Extra time a partitioned node's power-off takes (ms). Default SIM_FROZEN_POWER_OFF_MS. */
  frozenPowerOffMs?: number;
  /** What each node's BMC lies about, read at every call. Default: none lies. */
  lies?: BmcLies;
}

export class SimFenceDriver implements FenceDriver {
  readonly name = "sim";
  readonly #clusterRoot: string;
  readonly #noticeDelayMs: number;
  readonly #frozenPowerOffMs: number;
  readonly #lies: BmcLies;
  /** The cluster as its state file last read, and which version of the file that was. */
  #read: { version: string; cluster: SimCluster } | undefined;

  /**
   * `clusterRoot`: the sim cluster's state directory. Power actions re-read its state on every
   * call; power reads re-read it when the file changed: at 1000 nodes it is large, and a zone's
   * worth of early power reads parsing it each blocked the controller's event loop for seconds.
   */
  constructor(clusterRoot: string, options: SimFenceDriverOptions = {}) {
    this.#clusterRoot = clusterRoot;
    this.#noticeDelayMs = options.noticeDelayMs ?? SIM_POWER_LOSS_NOTICE_MS;
    this.#frozenPowerOffMs = options.frozenPowerOffMs ?? SIM_FROZEN_POWER_OFF_MS;
    this.#lies = options.lies ?? new BmcLies();
  }

  #current(): SimCluster {
    const stat = statSync(simLayout(this.#clusterRoot).stateFile, { throwIfNoEntry: false });
    // Gone: SimCluster.open says so, naming the cluster.
    if (stat === undefined) return SimCluster.open(this.#clusterRoot);
    const version = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    if (this.#read?.version !== version) {
      this.#read = { version, cluster: SimCluster.open(this.#clusterRoot) };
    }
    return this.#read.cluster;
  }

  async powerOff(target: FenceTarget, signal?: AbortSignal): Promise<void> {
    if (this.#lies.of(target.node).powerOffNoop) return;
    const cluster = SimCluster.open(this.#clusterRoot);
    if (this.#frozenPowerOffMs > 0 && cluster.nodePartitioned(target.node)) {
      await delay(this.#frozenPowerOffMs, undefined, signal ? { signal } : {});
    }
    await cluster.stopNode(target.node);
  }

  async powerOn(target: FenceTarget): Promise<void> {
    await SimCluster.open(this.#clusterRoot).startNode(target.node);
  }

  powerState(target: FenceTarget): Promise<PowerState> {
    if (this.#lies.of(target.node).powerReadsOff) return Promise.resolve("off");
    const running = this.#current().nodeRunning(target.node);
    if (running === undefined) return Promise.resolve("unknown");
    return Promise.resolve(running ? "on" : "off");
  }

  /**
   * Each write of the state file (atomic renames, by whichever process stops or starts nodes) is
   * compared with the last: the nodes that ran and run no more are one notice, given
   * noticeDelayMs later (not after the watch has stopped).
   */
  watchPowerLoss(onPowerLoss: PowerLossNotice, options: PowerWatchOptions): void {
    const { stateFile } = simLayout(this.#clusterRoot);
    let running: Set<string> | undefined;
    const compare = () => {
      let now: Set<string>;
      try {
        now = this.#current().runningNodes();
      } catch (error) {
        options.log(`sim power watch: cannot read ${stateFile}: ${errorMessage(error)}`);
        return;
      }
      const lost = running === undefined ? [] : [...running].filter((node) => !now.has(node));
      running = now;
      if (lost.length === 0) return;
      const nodes = new Set(lost);
      const notify = () => {
        if (!options.signal.aborted) onPowerLoss((target) => nodes.has(target.node));
      };
      if (this.#noticeDelayMs <= 0) notify();
      else setTimeout(notify, this.#noticeDelayMs).unref();
    };
    void keepWatching(
      "the sim cluster's state file",
      async (connected, signal) => {
        const changes = watch(dirname(stateFile), { signal });
        connected();
        compare();
        try {
          for await (const change of changes) {
            if (change.filename === null || change.filename === basename(stateFile)) compare();
          }
        } catch (error) {
          if (!signal.aborted) throw error;
        }
      },
      options,
    );
  }
}
