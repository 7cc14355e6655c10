// Parses the units found in kind and kubelet configuration: Kubernetes quantities ("200Mi", "1G"),
// eviction thresholds (a quantity or a percentage, "10%") and Go durations ("30s", "1m30s").
import { RekindleError } from "../../errors.js";

const BINARY_SUFFIXES: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

export const MiB = 2 ** 20;
export const GiB = 2 ** 30;

const QUANTITY_PATTERN = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E))?$/;

/** A Kubernetes resource quantity as a number of units (bytes for memory and storage). */
export function parseQuantity(text: string): number {
  const match = QUANTITY_PATTERN.exec(text.trim());
  if (!match?.[1]) {
    throw RekindleError.invalidInput(
      "quantity",
      text,
      "a number with an optional suffix: Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E, m or an exponent (1e6)",
    );
  }
  const value = Number(match[1]);
  if (match[2] !== undefined) return value * 10 ** Number(match[2].slice(1));
  const suffix = match[3] ?? "";
  return value * (BINARY_SUFFIXES[suffix] ?? DECIMAL_SUFFIXES[suffix] ?? 1);
}

/** A kubelet eviction threshold: an absolute amount or a share of the signal's capacity. */
export type EvictionThreshold = { bytes: number } | { percent: number };

export function parseThreshold(text: string): EvictionThreshold {
  const trimmed = text.trim();
  if (trimmed.endsWith("%")) {
    const percent = Number(trimmed.slice(0, -1));
    if (trimmed.length === 1 || !Number.isFinite(percent) || percent < 0 || percent > 100) {
      throw RekindleError.invalidInput(
        "eviction threshold",
        text,
        "a percentage 0%–100% or a quantity (200Mi)",
      );
    }
    return { percent };
  }
  return { bytes: parseQuantity(trimmed) };
}

/** The threshold in bytes for a signal whose capacity is `capacityBytes` (kubelet's rule). */
export function thresholdBytes(threshold: EvictionThreshold, capacityBytes: number): number {
  return "bytes" in threshold ? threshold.bytes : Math.ceil((capacityBytes * threshold.percent) / 100);
}

const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** A Go duration ("30s", "1m30s", "500ms", "0") in milliseconds, as the kubelet config writes them. */
export function parseGoDuration(text: string): number {
  const trimmed = text.trim();
  if (trimmed === "0") return 0;
  const part = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let index = 0;
  while (index < trimmed.length) {
    part.lastIndex = index;
    const match = part.exec(trimmed);
    if (!match?.[1] || !match[2]) {
      throw RekindleError.invalidInput("duration", text, "a Go duration such as 30s, 1m30s or 500ms");
    }
    total += Number(match[1]) * (DURATION_UNITS_MS[match[2]] ?? 0);
    index = part.lastIndex;
  }
  if (index === 0)
    throw RekindleError.invalidInput("duration", text, "a Go duration such as 30s, 1m30s or 500ms");
  return total;
}

/** "1.50 GiB", "256 MiB", "512 B": for messages. */
export function formatBytes(bytes: number): string {
  const abs = Math.abs(bytes);
  if (abs >= GiB) return `${(bytes / GiB).toFixed(2).replace(/\.00$/, "")} GiB`;
  if (abs >= MiB) return `${(bytes / MiB).toFixed(1).replace(/\.0$/, "")} MiB`;
  if (abs >= 1024) return `${(bytes / 1024).toFixed(1).replace(/\.0$/, "")} KiB`;
  return `${bytes} B`;
}
