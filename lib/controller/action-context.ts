// What the fence steps work with: the API, settings, the NodeFence store, metrics, the clock, the
// log, Events and the node's fence driver. The controller builds one and hands it to every step.
import type { k8s } from "../kube/client.js";
import type { ControllerConfig } from "./config.js";
import type { FenceDriver, FenceTarget } from "./drivers/types.js";
import type { EventReason } from "./events.js";
import type { MetricsRegistry } from "./metrics.js";
import type { NodeFenceStore } from "./node-fence-store.js";

export interface ActionContext {
  kc: k8s.KubeConfig;
  config: ControllerConfig;
  store: NodeFenceStore;
  metrics: MetricsRegistry;
  /** The controller's clock (ms). */
  now: () => number;
  log: (message: string) => void;
  /** Records a Node Event; a failure to record is logged, never thrown. */
  event: (node: string, reason: EventReason, message: string, type?: "Normal" | "Warning") => Promise<void>;
  /** The node's fence driver and target, from the fence config and the registered drivers. */
  driver: (node: string) => Promise<{ driver: FenceDriver; target: FenceTarget }>;
}

/** The context's clock as an RFC 3339 timestamp, as NodeFence status fields want it. */
export function isoNow(context: Pick<ActionContext, "now">): string {
  return new Date(context.now()).toISOString();
}
