// The measurements page's rendering of the controller's floor benches: bench/watch-floor.ts (what
// receiving the Lease watch costs) and bench/controller-flags.ts (the shipped controller under
// each set of node flags).
import { isRecord, rowsOf, table, type Json } from "./results-table.js";

/**
 * bench/watch-floor.ts: per reader (the process idle, then the Lease watch read each way), the CPU
 * of each window and what arrived. Files from before `--readers` hold only `leaseWatch`.
 */
export function watchFloorNumbers(content: Json): string[] {
  const byReader = isRecord(content.byReader) ? content.byReader : { watch: content.leaseWatch };
  const readers: [string, unknown][] = [["idle", content.idle], ...Object.entries(byReader)];
  const windows = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);
  const list = (ws: Json[], key: string) => ws.map((w) => String(w[key])).join(", ");
  return table(
    ["reader", "CPU, % of a core per window", "received per second"],
    readers
      .map(([reader, value]) => [reader, windows(value)] as const)
      .filter(([, ws]) => ws.length > 0)
      .map(([reader, ws]) => [
        reader,
        list(ws, "cpuPercentOfOneCore"),
        reader === "idle" ? "—" : list(ws, "eventsPerSecond"),
      ]),
  );
}

/** bench/controller-flags.ts: the shipped controller at rest under each set of node flags. */
export function controllerFlagsNumbers(content: Json): string[] {
  const list = (value: unknown) => (Array.isArray(value) ? value.map(String).join(", ") : "—");
  return table(
    ["node flags", "CPU, % of a core per window", "median", "RSS per window (MB)"],
    rowsOf(content, "variants").map((v) => [
      typeof v.flags === "string" && v.flags !== "" ? `\`${v.flags}\`` : "none",
      list(v.cpuPercentOfOneCore),
      typeof v.medianCpuPercentOfOneCore === "number"
        ? String(Math.round(v.medianCpuPercentOfOneCore * 100) / 100)
        : "—",
      list(v.rssMB),
    ]),
  );
}
