// Manual fencing: a person powers the machine off and says so by annotating the Node
// (`kubectl annotate node <n> rekindle.dev/power-state=off`). Nothing is done automatically.
import { k8s } from "../../kube/client.js";
import type { FenceDriver, FenceTarget, PowerState } from "./types.js";

export const POWER_STATE_ANNOTATION = "rekindle.dev/power-state";

export class ManualFenceDriver implements FenceDriver {
  readonly name = "manual";
  readonly #kc: k8s.KubeConfig;

  constructor(kc: k8s.KubeConfig) {
    this.#kc = kc;
  }

  powerOff(): Promise<void> {
    return Promise.resolve();
  }

  async powerState(target: FenceTarget): Promise<PowerState> {
    const node = await this.#kc.makeApiClient(k8s.CoreV1Api).readNode({ name: target.node });
    const value = node.metadata?.annotations?.[POWER_STATE_ANNOTATION];
    return value === "off" ? "off" : value === "on" ? "on" : "unknown";
  }
}
