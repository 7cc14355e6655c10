// Benchmark: the wall time of a whole `rekindle run` as a user types it (the fast conformance run,
// every family, serial or --parallel), what the machine spent meanwhile, and each scenario's span.
// Usage: npx tsx bench/run-wall.ts --label <name> [--sample-seconds 5] -- <rekindle run flags>
//   e.g. npx tsx bench/run-wall.ts --label fast-parallel-auto -- --provider sim --profile fast --parallel auto
// Runs `node bin/rekindle.js run <flags> --no-html --report-dir <tmp>` (build first: npm run build),
// and writes bench/results/run-<label>-<date>.json. The machine's CPU and memory are read from
// /proc (everything on it, so run it alone: the load at start is recorded). Not a test.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { minutes } from "../lib/report/measurements.js";
import type { RunSummary } from "../lib/report/summary.js";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { benchProvenance } from "./provenance.js";
import { benchMachine, writeResultsFile } from "./results-file.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    label: { type: "string" },
    "sample-seconds": { type: "string", default: "5" },
  },
});
if (values.label === undefined || !/^[a-z0-9][a-z0-9-]*$/.test(values.label)) {
  console.error(
    "--label <name> is required: lower-case letters, digits and dashes (it names the results file)",
  );
  process.exit(2);
}
const label = values.label;
const sampleMs = Number(values["sample-seconds"]) * 1000;
if (!Number.isFinite(sampleMs) || sampleMs < 1000) {
  console.error(`--sample-seconds ${values["sample-seconds"]}: a number of seconds, 1 or more`);
  process.exit(2);
}

/** Busy and total jiffies of every core together (/proc/stat's first line). */
function cpuJiffies(): { busy: number; total: number } {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1);
  const n = fields.map(Number);
  const total = n.reduce((s, v) => s + v, 0);
  const idle = (n[3] ?? 0) + (n[4] ?? 0); // idle + iowait
  return { busy: total - idle, total };
}

/** Memory in use on the machine (MemTotal − MemAvailable), GiB. */
function memoryInUseGiB(): number {
  const info = readFileSync("/proc/meminfo", "utf8");
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(info)?.[1] ?? 0);
  return (kib("MemTotal") - kib("MemAvailable")) / 1024 ** 2;
}

const cores = benchMachine().cores;
const provenance = benchProvenance();
const reportDir = mkdtempSync(join(tmpdir(), `rekindle-bench-run-${label}-`));
const args = ["bin/rekindle.js", "run", ...positionals, "--no-html", "--report-dir", reportDir];
const memoryBefore = memoryInUseGiB();
const t0 = Date.now();
const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] });
// Ctrl-C (or a kill) reaches the run, which tears its clusters down; this waits for it, then exits
// without a results file (an interrupted run measures nothing).
const interrupted = { by: undefined as NodeJS.Signals | undefined };
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    interrupted.by = signal;
    child.kill(signal);
  });

/** Each scenario's first and last progress line, ms from the start: its span, setup and undo included. */
const spans = new Map<string, { firstMs: number; lastMs: number }>();
const SCENARIO_IN_LINE = /(?:^|\s)((?:[a-z][a-z-]*)\/[a-z0-9][a-z0-9.-]*):\s/;
/** Passes a stream of the run on line by line, noting each scenario it names (progress goes to stderr). */
function follow(stream: NodeJS.ReadableStream, to: NodeJS.WriteStream): void {
  createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
    to.write(`${line}\n`);
    const id = SCENARIO_IN_LINE.exec(line)?.[1];
    if (id === undefined) return;
    const at = Date.now() - t0;
    const span = spans.get(id);
    if (span === undefined) spans.set(id, { firstMs: at, lastMs: at });
    else span.lastMs = at;
  });
}
follow(child.stdout, process.stdout);
follow(child.stderr, process.stderr);

const coreSamples: number[] = [];
let memoryPeakGiB = memoryBefore;
let last = cpuJiffies();
const firstJiffies = last;
const sampler = setInterval(() => {
  const now = cpuJiffies();
  const total = now.total - last.total;
  if (total > 0) coreSamples.push(((now.busy - last.busy) / total) * cores);
  last = now;
  memoryPeakGiB = Math.max(memoryPeakGiB, memoryInUseGiB());
}, sampleMs);
const exitCode = await new Promise<number>((resolve) => {
  child.on("exit", (code) => {
    resolve(code ?? 1);
  });
});
clearInterval(sampler);
if (interrupted.by !== undefined) {
  process.stderr.write(`${interrupted.by}: the run exited with ${exitCode}; no results file written\n`);
  process.exit(exitCode);
}
const wallMs = Date.now() - t0;
const end = cpuJiffies();
const meanCores = ((end.busy - firstJiffies.busy) / Math.max(1, end.total - firstJiffies.total)) * cores;

const summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
const passed = summary.scenarios.filter((s) => s.outcome === "passed").length;
const failed = summary.scenarios.filter((s) => s.outcome === "failed");
const skipped = summary.skipped ?? [];
const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;
const scenarios = summary.scenarios.map((s) => {
  const span = spans.get(s.id);
  const slot = summary.parallel?.slots.find((sl) => sl.scenarios.includes(s.id));
  return {
    id: s.id,
    outcome: s.outcome,
    spanMs: span === undefined ? null : span.lastMs - span.firstMs,
    ...(slot === undefined ? {} : { cluster: slot.index }),
  };
});
const result = {
  ...provenance,
  machine: benchMachine(),
  runs: 1,
  provider: summary.provider,
  profile: summary.profile,
  rekindleArgs: positionals,
  exitCode,
  wallMs,
  outcome: `${passed} passed, ${failed.length} failed${skipped.length > 0 ? `, ${skipped.length} skipped` : ""}`,
  failed: failed.map((s) => ({ id: s.id, error: (s.error ?? "").split("\n")[0] ?? "" })),
  skipped,
  clusters: summary.parallel?.clusters ?? 1,
  chosenBy: summary.parallel?.chosenBy ?? "serial",
  /** The whole machine's CPU over the run, and its busiest sample, in cores. */
  machineCores: {
    mean: round(meanCores, 2),
    peakSample: round(Math.max(0, ...coreSamples), 2),
    sampleSeconds: sampleMs / 1000,
  },
  /** Memory in use on the whole machine: before the run, and the highest sample during it. */
  memoryGiB: { before: round(memoryBefore, 2), peak: round(memoryPeakGiB, 2) },
  /** Sum of the scenarios' spans: what a serial run of the same scenarios would spend in them. */
  scenarioSpanSumMs: scenarios.reduce((s, x) => s + (x.spanMs ?? 0), 0),
  scenarios,
};
const out = join(PROJECT_ROOT, "bench", "results", `run-${label}-${provenance.date}.json`);
await writeResultsFile(out, result);
console.log(
  `${label}: ${minutes(wallMs)} wall, ${result.outcome}, ${result.clusters} cluster(s) (${result.chosenBy}); machine ${result.machineCores.mean} cores mean, ${result.machineCores.peakSample} peak; memory peak ${result.memoryGiB.peak} GiB`,
);
console.log(`written to ${out} (reports in ${reportDir})`);
process.exit(exitCode === 0 || exitCode === 1 ? 0 : exitCode);
