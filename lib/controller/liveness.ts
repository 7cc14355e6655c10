// The controller's liveness (its /healthz): healthy when a pass (acting or, as a standby,
// observing) completed recently. A pass completes only while the watch caches it reads are
// current, so a controller blind for longer than the limit is unhealthy: fencing never stops silently.
import type { ControllerConfig } from "./config.js";

export interface PassRecord {
  /** The loop was started. */
  running: boolean;
  /** When the last pass completed (monotonic ms); undefined before the first. */
  lastPassAt: number | undefined;
  /** Why the last pass failed, if it did. */
  lastPassError: string | undefined;
}

export function controllerLiveness(
  config: Pick<ControllerConfig, "checkIntervalMs" | "passTimeoutMs" | "apiTimeoutMs">,
  record: PassRecord,
  nowMs: number,
  context: { role: string; staleness: () => string | undefined },
): { ok: boolean; message: string } {
  const { checkIntervalMs, passTimeoutMs, apiTimeoutMs } = config;
  // Between two passes lie at most a whole pass and a relist: the liveness probe allows both.
  const limit = Math.max(5 * checkIntervalMs, apiTimeoutMs + passTimeoutMs + 2 * checkIntervalMs);
  if (record.lastPassAt === undefined) {
    return { ok: record.running, message: record.lastPassError ?? "starting: no pass completed yet" };
  }
  const age = Math.round(nowMs - record.lastPassAt);
  if (age > limit) {
    const why = context.staleness() ?? record.lastPassError ?? "stalled";
    return { ok: false, message: `no reconcile pass completed for ${age} ms: ${why}` };
  }
  return { ok: true, message: `${context.role}; last pass ${age} ms ago` };
}
