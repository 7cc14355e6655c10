// Manual fencing: a person powers the machine off and says so by annotating the Node
// (`kubectl annotate node <n> rekindle.dev/power-state=off`). Nothing is done automatically.
import { RekindleError } from "../../errors.js";
import { abortOptions } from "../../kube/abort.js";
import { k8s } from "../../kube/client.js";
import type { FenceDriver, FenceDriverSpec, FenceTarget, PowerState } from "./types.js";

export const POWER_STATE_ANNOTATION = "rekindle.dev/power-state";
/** The manual driver's name: its confirmation waits `manualConfirmTimeoutMs`, not the BMC's timeout. */
export const MANUAL_DRIVER_NAME = "manual";

export class ManualFenceDriver implements FenceDriver {
  readonly name = MANUAL_DRIVER_NAME;
  /** No options, no credentials. */
  readonly spec: FenceDriverSpec = { options: {} };
  readonly #kc: k8s.KubeConfig;

  constructor(kc: k8s.KubeConfig) {
    this.#kc = kc;
  }

  powerOff(): Promise<void> {
    return Promise.resolve();
  }

  async powerState(target: FenceTarget, signal?: AbortSignal): Promise<PowerState> {
    const aborted = () =>
      new RekindleError("ABORTED", `reading node ${target.node}'s power-state annotation aborted`, {
        cause: signal?.reason,
      });
    if (signal?.aborted) throw aborted();
    let node: k8s.V1Node;
    try {
      node = await this.#kc
        .makeApiClient(k8s.CoreV1Api)
        .readNode({ name: target.node }, ...(signal ? [abortOptions(signal)] : []));
    } catch (error) {
      if (signal?.aborted) throw aborted();
      throw error;
    }
    const value = node.metadata?.annotations?.[POWER_STATE_ANNOTATION];
    return value === "off" ? "off" : value === "on" ? "on" : "unknown";
  }
}
