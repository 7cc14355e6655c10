// Fences a sim node by stopping the kwok that plays it (the node's "power"); confirmed when none
// does. It gives no power-loss notices (watchPowerLoss): the sim's graceful shutdown stops a node's
// kwok before it plays the kubelet's last words (NotReady, the pods ended), so a notice would come
// at the start of the shutdown, not at its power-off as on a real node.
import { statSync } from "node:fs";
import { SimCluster } from "./cluster.js";
import { simLayout } from "./layout.js";
import type { FenceDriver, FenceTarget, PowerState } from "../../controller/drivers/types.js";

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
}
