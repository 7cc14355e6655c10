// Fences a sim node by killing its kwok process (the node's "power"); confirmed when no process runs.
import { SimCluster } from "./cluster.js";
import type { FenceDriver, FenceTarget, PowerState } from "../../controller/drivers/types.js";

export class SimFenceDriver implements FenceDriver {
  readonly name = "sim";
  readonly #clusterRoot: string;

  /** `clusterRoot`: the sim cluster's state directory (state is re-read on every call). */
  constructor(clusterRoot: string) {
    this.#clusterRoot = clusterRoot;
  }

  async powerOff(target: FenceTarget): Promise<void> {
    await SimCluster.open(this.#clusterRoot).stopNode(target.node);
  }

  async powerOn(target: FenceTarget): Promise<void> {
    await SimCluster.open(this.#clusterRoot).startNode(target.node);
  }

  powerState(target: FenceTarget): Promise<PowerState> {
    const running = SimCluster.open(this.#clusterRoot).nodeRunning(target.node);
    if (running === undefined) return Promise.resolve("unknown");
    return Promise.resolve(running ? "on" : "off");
  }
}
