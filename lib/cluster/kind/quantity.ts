// Parses the units found in kind and kubelet configuration: Kubernetes quantities ("200Mi", "1G"),
// eviction thresholds (a quantity or a percentage, "10%") and Go durations ("30s", "1m30s").
import { RekindleError } from "../../errors.js";
import { parseQuantity } from "../../kube/quantity.js";
import { parseDurationMs } from "../../util/duration.js";

export { parseQuantity };

export const MiB = 2 ** 20;
export const GiB = 2 ** 30;

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

/** A Go duration ("30s", "1m30s", "500ms", "0") in milliseconds, as the kubelet config writes them. */
export function parseGoDuration(text: string): number {
  return parseDurationMs(text);
}

/** "1.50 GiB", "256 MiB", "512 B": for messages. */
export function formatBytes(bytes: number): string {
  const abs = Math.abs(bytes);
  if (abs >= GiB) return `${(bytes / GiB).toFixed(2).replace(/\.00$/, "")} GiB`;
  if (abs >= MiB) return `${(bytes / MiB).toFixed(1).replace(/\.0$/, "")} MiB`;
  if (abs >= 1024) return `${(bytes / 1024).toFixed(1).replace(/\.0$/, "")} KiB`;
  return `${bytes} B`;
}
