// Fences a sim node by stopping the kwok that plays it (the node's "power"); confirmed when none
// does. Power losses are heard by watching the cluster's state file (watchPowerLoss), as a BMC's
// power events would be: a node is recorded stopped when its power goes, which for a graceful
// shutdown is at its end, once the kubelet's last words are said (shutdown.ts).
import { statSync } from "node:fs";
import { watch } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { SimCluster } from "./cluster.js";
import { simLayout } from "./layout.js";
import type {
  FenceDriver,
  FenceTarget,
  PowerLossNotice,
  PowerState,
  PowerWatchOptions,
} from "../../controller/drivers/types.js";
import { errorMessage } from "../../errors.js";
import { keepWatching } from "../../util/keep-watching.js";

export class SimFenceDriver implements FenceDriver {
  readonly name = "sim";
  readonly #clusterRoot: string;
  /** The cluster as its state file last read, and which version of the file that was. */
  #read: { version: string; cluster: SimCluster } | undefined;

  /**
   * `clusterRoot`: the sim cluster's state directory. Power actions re-read its state on every
   * call; power reads re-read it when the file changed: at 1000 nodes it is large, and a zone's
   * worth of early power reads parsing it each blocked the controller's event loop for seconds.
   */
  constructor(clusterRoot: string) {
    this.#clusterRoot = clusterRoot;
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

  async powerOff(target: FenceTarget): Promise<void> {
    await SimCluster.open(this.#clusterRoot).stopNode(target.node);
  }

  async powerOn(target: FenceTarget): Promise<void> {
    await SimCluster.open(this.#clusterRoot).startNode(target.node);
  }

  powerState(target: FenceTarget): Promise<PowerState> {
    const running = this.#current().nodeRunning(target.node);
    if (running === undefined) return Promise.resolve("unknown");
    return Promise.resolve(running ? "on" : "off");
  }

  /**
   * Each write of the state file (atomic renames, by whichever process stops or starts nodes) is
   * compared with the last: the nodes that ran and run no more are one notice.
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
      if (lost.length > 0) {
        const nodes = new Set(lost);
        onPowerLoss((target) => nodes.has(target.node));
      }
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
