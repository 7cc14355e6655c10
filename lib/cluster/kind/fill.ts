// How much to write into a kind node to push it past a kubelet eviction threshold, and the safety
// cap that stops a run from filling a laptop's disk or memory by surprise. Pure functions.
import type { PressureKind } from "../provider.js";
import { RekindleError } from "../../errors.js";
import { formatBytes, GiB, MiB, parseQuantity, thresholdBytes, type EvictionThreshold } from "./quantity.js";

/** The kubelet eviction signal each pressure kind crosses. */
export const PRESSURE_SIGNALS: Readonly<Record<PressureKind, string>> = {
  memory: "memory.available",
  disk: "nodefs.available",
};

/** Default overshoot past the threshold, per kind. Memory is clamped further (see bytesToFill). */
export const DEFAULT_FILL_MARGIN_BYTES: Readonly<Record<PressureKind, number>> = {
  memory: 64 * MiB,
  disk: 256 * MiB,
};

/** Default largest fill rekindle writes into a node; REKINDLE_KIND_MAX_FILL or the option raises it. */
export const DEFAULT_MAX_FILL_BYTES = 8 * GiB;

/** What the kubelet reports for one signal (from its stats summary). */
export interface SignalStats {
  availableBytes: number;
  capacityBytes: number;
}

export interface FillPlan {
  kind: PressureKind;
  signal: string;
  /** Bytes to write, rounded up to whole MiB. */
  fillBytes: number;
  /** How fillBytes was computed; absent for a fixed size. */
  derivation?: { availableBytes: number; thresholdBytes: number; marginBytes: number };
}

/** Sizes the fill for a node; the default reads the kubelet's stats (see planFill). */
export type FillPlanner = (node: string, kind: PressureKind) => Promise<FillPlan>;

/** A planner that always writes `bytes` (tests, or a user who knows the node). */
export function fixedFill(bytes: number): FillPlanner {
  return (_node, kind) =>
    Promise.resolve({
      kind,
      signal: PRESSURE_SIGNALS[kind],
      fillBytes: Math.max(MiB, Math.ceil(bytes / MiB) * MiB),
    });
}

/**
 * available − threshold + margin, rounded up to a MiB. The margin is capped at half the threshold
 * so the node is left with some room (a memory fill that overshoots to zero would OOM the node
 * instead of letting the kubelet evict).
 */
export function planFill(
  kind: PressureKind,
  stats: SignalStats,
  threshold: EvictionThreshold,
  marginBytes: number = DEFAULT_FILL_MARGIN_BYTES[kind],
): FillPlan {
  const limit = thresholdBytes(threshold, stats.capacityBytes);
  const margin = Math.max(0, Math.min(marginBytes, Math.floor(limit / 2)));
  const raw = Math.max(0, stats.availableBytes - limit) + margin;
  return {
    kind,
    signal: PRESSURE_SIGNALS[kind],
    fillBytes: Math.max(MiB, Math.ceil(raw / MiB) * MiB),
    derivation: { availableBytes: stats.availableBytes, thresholdBytes: limit, marginBytes: margin },
  };
}

/** Throws STATE naming the computed size and the option when the fill is larger than the cap. */
export function checkFillCap(node: string, plan: FillPlan, maxFillBytes: number): void {
  if (plan.fillBytes <= maxFillBytes) return;
  const d = plan.derivation;
  const why = d
    ? ` (${plan.signal} ${formatBytes(d.availableBytes)} − threshold ${formatBytes(d.thresholdBytes)} + margin ${formatBytes(d.marginBytes)})`
    : "";
  throw new RekindleError(
    "PRECONDITION",
    `${plan.kind} pressure on node ${node} needs a ${formatBytes(plan.fillBytes)} fill${why}, ` +
      `more than the ${formatBytes(maxFillBytes)} safety cap (maxFillBytes); nothing was written`,
    {
      hint: `raise the kind provider's maxFillBytes option (or REKINDLE_KIND_MAX_FILL, e.g. "${Math.ceil(plan.fillBytes / GiB) + 1}Gi") if node ${node} can take it`,
      details: { node, ...plan, maxFillBytes },
    },
  );
}

/** The cap: $REKINDLE_KIND_MAX_FILL (a quantity such as "16Gi") when set, else 8 GiB. */
export function defaultMaxFillBytes(env: NodeJS.ProcessEnv = process.env): number {
  const text = env["REKINDLE_KIND_MAX_FILL"];
  return text !== undefined && text !== "" ? parseQuantity(text) : DEFAULT_MAX_FILL_BYTES;
}
