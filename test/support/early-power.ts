// Helpers for the early power read's tests (controller-early-power*.test.ts): a scripted fleet of
// Lease renewals, a scripted driver, and a scheduler fired by hand. Fake clock throughout.
import { EarlyPowerReads, type EarlyPowerReadsOptions } from "../../lib/controller/early-power.js";
import type { PowerState } from "../../lib/controller/drivers/types.js";
import type { NodeObservations } from "../../lib/controller/observations.js";
import type { Snapshot } from "../../lib/controller/snapshot.js";
import { observations, replay, snapshotAt, type ScriptedNode } from "./node-history.js";

export const T0 = Date.parse("2026-01-01T00:00:00Z");
export const s = (seconds: number) => T0 + seconds * 1000;
export const UNHEALTHY_AFTER_MS = 20_000;
export const CHECK_MS = 1_000;

/** Three workers of one zone renewing every 10 s (phases 0, 3, 6 s); `stopsAt` silences some. */
export function cluster(stopsAt: Record<string, number>, until: number) {
  const nodes: ScriptedNode[] = ["a", "b", "c"].map((name, i) => ({
    name,
    zone: "z",
    phaseMs: [0, 3_000, 6_000][i] ?? 0,
    alive: (t: number) => stopsAt[name] === undefined || t < stopsAt[name],
  }));
  const o = observations({ checkIntervalMs: CHECK_MS, unhealthyAfterMs: UNHEALTHY_AFTER_MS });
  replay(o, nodes, { from: s(0), to: until });
  const snapshot: Snapshot = { ...snapshotAt(nodes, until, s(0)), fences: new Map(), paused: false };
  return { o, snapshot };
}

/** A driver that answers `states[node]` (default on) and counts its reads. */
export function scriptedReads(states: Record<string, PowerState>) {
  const reads: string[] = [];
  return {
    reads,
    read: (node: string) => {
      reads.push(node);
      return Promise.resolve({ state: states[node] ?? "on", driver: "scripted" });
    },
  };
}

/** Early reads over `o` with this file's check interval; the rest as given. */
export function earlyReads(
  o: NodeObservations,
  options: Pick<EarlyPowerReadsOptions, "read" | "now"> & Partial<EarlyPowerReadsOptions>,
): EarlyPowerReads {
  return new EarlyPowerReads({
    observations: o,
    checkIntervalMs: CHECK_MS,
    unhealthyAfterMs: UNHEALTHY_AFTER_MS,
    maxConcurrent: 8,
    log: () => undefined,
    // No real timer: a test that wants the wake-up at a due time passes `wakeUps().schedule`.
    schedule: () => () => undefined,
    ...options,
  });
}

/** A scheduler the test fires by hand: the delays asked for, and `fire()` runs the live ones. */
export function wakeUps() {
  let pending: { callback: () => void; delayMs: number; cancelled: boolean }[] = [];
  return {
    delays: () => pending.filter((p) => !p.cancelled).map((p) => p.delayMs),
    schedule: (callback: () => void, delayMs: number) => {
      const entry = { callback, delayMs, cancelled: false };
      pending.push(entry);
      return () => {
        entry.cancelled = true;
      };
    },
    fire: () => {
      const live = pending.filter((p) => !p.cancelled);
      pending = [];
      for (const p of live) p.callback();
    },
  };
}
