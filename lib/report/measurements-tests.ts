// The measurements page's rendering of the test suites' own results: bench/unit-stress.ts's runs of
// the unit suite on a loaded machine, and a gate run's slowest test files.
import { isRecord, minutes, rowsOf, table, type Json } from "./results-table.js";

const seconds = (ms: unknown) => (typeof ms === "number" ? `${(ms / 1000).toFixed(0)} s` : "—");

/** A unit-stress-… file: each run's counts, wall time and load, and what failed. */
export function unitStressNumbers(content: Json): string[] {
  const load = isRecord(content.load) ? content.load : {};
  return [
    `${String(content.outcome)}, beside ${String(content.busyLoops)} busy loop(s); 1-minute load ${String(load.min)}–${String(load.max)} at the runs' ends.`,
    "",
    ...table(
      ["run", "passed", "failed", "wall time", "load", "failures"],
      rowsOf(content, "rows").map((r) => [
        String(r.run),
        String(r.passed),
        String(r.failed),
        seconds(r.wallMs),
        String(r.loadAtEnd),
        Array.isArray(r.failures) && r.failures.length > 0 ? r.failures.map(String).join("; ") : "",
      ]),
    ),
  ];
}

/** A gate-… file: each run of the gate, its stages, and its slowest test files where recorded. */
export function gateNumbers(content: Json): string[] {
  const rows = rowsOf(content, "rows");
  return [
    ...table(
      ["run", "git sha", "outcome", "total", "stages", "conditions"],
      rows.map((r) => [
        String(r.run),
        typeof r.gitSha === "string" ? r.gitSha.slice(0, 7) : "—",
        String(r.outcome),
        minutes(r.totalMs),
        isRecord(r.stagesMs)
          ? Object.entries(r.stagesMs)
              .map(([stage, ms]) => `${stage} ${minutes(ms)}`)
              .join("; ")
          : "—",
        typeof r.conditions === "string" ? r.conditions : "",
      ]),
    ),
    ...rows.flatMap((r) => slowestTestFiles(r)),
  ];
}

/** The slowest test files a gate row recorded (test/support/totals-reporter.cjs), per layer. */
export function slowestTestFiles(row: Json, shown = 8): string[] {
  const layers = isRecord(row.files) ? Object.entries(row.files) : [];
  return layers.flatMap(([layer, files]) => {
    const list = Array.isArray(files) ? files.filter(isRecord) : [];
    if (list.length === 0) return [];
    const slowest = [...list]
      .sort((a, b) => Number(b.ms) - Number(a.ms))
      .slice(0, shown)
      .map((f) => `${String(f.file)} ${seconds(f.ms)}`);
    return ["", `${String(row.run)}, ${layer}'s slowest files: ${slowest.join("; ")}.`];
  });
}
