// Stability check: the unit suite run again and again on a loaded machine, where a test that leans
// on the real clock or on the order of two unrelated events shows itself.
// Usage: npx tsx bench/unit-stress.ts [--runs 20] [--busy 2] [--label NAME]
// Starts `--busy` CPU-bound loops (each a node process spinning), runs `npm run test:unit` `--runs`
// times one after another beside them, and writes bench/results/unit-stress[-NAME]-<date>.json:
// each run's counts, its failing tests, its wall time and the machine's load. The loops are ended
// however the script ends. Exits 1 when any run had a failure. Not a test.
import { spawn, type ChildProcess } from "node:child_process";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { benchProvenance } from "./provenance.js";
import { benchMachine, writeResultsFile } from "./results-file.js";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "20" },
    busy: { type: "string", default: "2" },
    label: { type: "string" },
  },
});

function count(flag: string, text: string, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > max) {
    console.error(`--${flag} ${text}: a whole number from 1 to ${max}`);
    process.exit(2);
  }
  return n;
}
const runs = count("runs", values.runs, 100);
const busy = count("busy", values.busy, 16);
if (values.label !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(values.label)) {
  console.error("--label: lower-case letters, digits and dashes (it names the results file)");
  process.exit(2);
}

interface RunRow {
  run: number;
  passed: number;
  failed: number;
  failures: string[];
  wallMs: number;
  /** The 1-minute load average when the run ended (it covers most of the run). */
  loadAtEnd: number;
  exitCode: number | null;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** One `npm run test:unit`: its closing line's counts and the titles mocha printed as failing. */
function unitRun(run: number): Promise<RunRow> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("npm", ["run", "--silent", "test:unit"], {
      cwd: PROJECT_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.once("error", reject);
    child.once("close", (exitCode) => {
      const totals = /^unit: (\d+) passed, (\d+) failed/m.exec(out);
      // mocha's spec reporter lists each failure as "  N) <suite>\n       <title>:" after the run.
      const failures = [...out.matchAll(/^\s+\d+\) (.+)\n\s+(.+):$/gm)].map((m) => `${m[1]} ${m[2]}`);
      resolve({
        run,
        passed: Number(totals?.[1] ?? 0),
        failed: totals === null ? -1 : Number(totals[2]),
        failures,
        wallMs: Math.round(performance.now() - started),
        loadAtEnd: round1(loadavg()[0] ?? 0),
        exitCode,
      });
    });
  });
}

const loops: ChildProcess[] = [];
const endLoops = () => {
  for (const loop of loops) loop.kill("SIGKILL");
};
process.once("exit", endLoops);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    endLoops();
    process.exit(130);
  });

const provenance = benchProvenance();
const loadBefore = round1(loadavg()[0] ?? 0);
for (let i = 0; i < busy; i += 1)
  loops.push(spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));

const rows: RunRow[] = [];
for (let run = 1; run <= runs; run += 1) {
  const row = await unitRun(run);
  rows.push(row);
  const what = row.failed === 0 ? "passed" : `FAILED: ${row.failures.join("; ") || "see the closing line"}`;
  console.log(
    `run ${run}/${runs}: ${row.passed} passed, ${row.failed} failed, ${(row.wallMs / 1000).toFixed(0)} s, load ${row.loadAtEnd}: ${what}`,
  );
}
endLoops();

const failedRuns = rows.filter((r) => r.failed !== 0 || r.exitCode !== 0);
const loads = rows.map((r) => r.loadAtEnd);
const result = {
  ...provenance,
  machine: benchMachine(),
  runs,
  busyLoops: busy,
  loadBefore,
  load: { min: Math.min(...loads), max: Math.max(...loads) },
  outcome: `${runs - failedRuns.length} of ${runs} runs passed`,
  rows,
};
const date = provenance.date;
const out = join(
  PROJECT_ROOT,
  "bench",
  "results",
  `unit-stress${values.label !== undefined ? `-${values.label}` : ""}-${date}.json`,
);
await writeResultsFile(out, result);
console.log(`${result.outcome} at load ${result.load.min}-${result.load.max}; written to ${out}`);
process.exit(failedRuns.length === 0 ? 0 : 1);
