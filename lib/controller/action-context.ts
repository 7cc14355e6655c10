// What the fence steps work with: the API, settings, the NodeFence store, metrics, the clock, the
// log, Events, the node's fence driver and the signals that bound every side effect. The
// controller builds one and hands it to every step.
import { errorMessage, RekindleError } from "../errors.js";
import type { k8s } from "../kube/client.js";
import type { BoundedSignal } from "../util/abort.js";
import type { WorkloadReads } from "./cluster-caches.js";
import type { ControllerConfig } from "./config.js";
import type { FenceDriver, FenceTarget } from "./drivers/types.js";
import type { EventReason } from "./events.js";
import type { ControllerMetrics } from "./metrics.js";
import type { NodeFenceStore } from "./node-fence-store.js";
import type { LostNow } from "./present.js";

export interface ActionContext {
  kc: k8s.KubeConfig;
  /** A node's pods and VolumeAttachments, from the watch caches (cluster-caches.ts). */
  reads: WorkloadReads;
  config: ControllerConfig;
  store: NodeFenceStore;
  metrics: ControllerMetrics;
  /**
   * The wall clock (ms): for timestamps written to NodeFences and the durations measured from them
   * (they outlive this process). Durations of this process's own are on its monotonic clock.
   */
  now: () => number;
  log: (message: string) => void;
  /** Records a Node Event; a failure to record is logged, never thrown. */
  event: (node: string, reason: EventReason, message: string, type?: "Normal" | "Warning") => Promise<void>;
  /** The node's fence driver and target, from the fence config and the registered drivers. */
  driver: (node: string) => Promise<{ driver: FenceDriver; target: FenceTarget }>;
  /** Aborted when this controller may not act any more (stopped, or its leadership term ended). */
  acting: () => AbortSignal;
  /**
   * The signal for one driver call: `acting()` plus a timeout of driverTimeoutMs, shortened under
   * leader election so the call ends before a standby could take over.
   */
  driverSignal: () => BoundedSignal;
  /** Whether the node is lost at this moment, from a fresh read of its state (present.ts). */
  lostNow: (node: string) => Promise<LostNow>;
}

/** Throws unless the controller may still act: checked right before every side effect. */
export function assertActing(context: Pick<ActionContext, "acting">): void {
  const signal = context.acting();
  if (signal.aborted) {
    throw new RekindleError("CONFLICT", `not acting: ${errorMessage(signal.reason)}`);
  }
}

/** Counts a failed API call or step, unless it only says this controller may not act any more. */
export function countFailure(context: Pick<ActionContext, "acting" | "metrics">, error: unknown): void {
  if (!context.acting().aborted) context.metrics.apiError(error);
}

/** The context's clock as an RFC 3339 timestamp, as NodeFence status fields want it. */
export function isoNow(context: Pick<ActionContext, "now">): string {
  return new Date(context.now()).toISOString();
}
