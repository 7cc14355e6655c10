// Calibration: the same scenarios on the sim and on real kind kubelets, side by side. Reads the
// summary.json of sim runs and of kind runs (`rekindle run --profile fast --repeat 5 …`), or the
// trimmed copies kept under bench/results/calibration/; pools each provider's runs (one clean git
// sha unless --pool-shas lists several: calibration-pool.ts), and writes between the markers of
// bench/results/calibration-table.md the flagged count, a table per scenario and every milestone row with its
// median and range (calibration-page.ts); the explanations of flagged rows are written by hand.
// Also writes bench/results/calibration-<date>.json and the trimmed raw summaries.
// Usage: npx tsx bench/calibration.ts --sim <summary.json>... --kind <summary.json>...
//        [--pool-shas <sha>,<sha>] [--exclude <scenario id>@<run id>]... [--min-runs 5]
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { format, resolveConfig } from "prettier";
import { RekindleError } from "../lib/errors.js";
import { readSummary } from "../lib/report/summary-file.js";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { poolRuns, type CalibrationInput } from "./calibration-pool.js";
import { renderCalibrationPage } from "./calibration-page.js";
import { trimmedFileName, trimSummary } from "./calibration-raw.js";
import { calibrationRows, flagsByScenario, shortOfRuns } from "./calibration-rows.js";
import { writeBetweenMarkers } from "./doc-markers.js";
import { benchProvenance } from "./provenance.js";

const USAGE =
  "usage: npx tsx bench/calibration.ts --sim <summary.json>... --kind <summary.json>... [--pool-shas <sha>,<sha>] [--exclude <scenario id>@<run id>]... [--min-runs 5]";

function fail(message: string, hint?: string): never {
  console.error(`calibration: ${message}${hint ? `\n  hint: ${hint}` : ""}\n${USAGE}`);
  process.exit(2);
}

const { values } = parseArgs({
  options: {
    sim: { type: "string", multiple: true },
    kind: { type: "string", multiple: true },
    "pool-shas": { type: "string" },
    exclude: { type: "string", multiple: true },
    "min-runs": { type: "string", default: "5" },
  },
});
if (!values.sim?.length || !values.kind?.length) fail("give both --sim and --kind summaries");
const minRuns = Number(values["min-runs"]);
if (!Number.isInteger(minRuns) || minRuns < 1)
  fail(`--min-runs ${values["min-runs"]}: give a whole number ≥ 1`);
const poolShas =
  values["pool-shas"]
    ?.split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "") ?? [];

// Before anything is written: the dirty flag is the checkout's, not this script's output.
const provenance = benchProvenance();

let read: { sim: CalibrationInput[]; kind: CalibrationInput[] };
let pooled: { sim: ReturnType<typeof poolRuns>; kind: ReturnType<typeof poolRuns> };
const summaries = new Map<string, ReturnType<typeof readSummary>>();
try {
  const load = (files: readonly string[]) =>
    files.map((file) => {
      const summary = readSummary(file);
      summaries.set(file, summary);
      return { file, summary };
    });
  read = { sim: load(values.sim), kind: load(values.kind) };
  const exclude = values.exclude ?? [];
  const runIds = [...read.sim, ...read.kind].map((i) => i.summary.runId);
  const stray = exclude.filter((e) => !runIds.includes(e.slice(e.lastIndexOf("@") + 1)));
  if (stray.length > 0) fail(`--exclude ${stray.join(", ")}: no summary given has that run id`);
  pooled = {
    sim: poolRuns(read.sim, "sim", { poolShas, exclude }),
    kind: poolRuns(read.kind, "kind", { poolShas, exclude }),
  };
} catch (error) {
  if (error instanceof RekindleError) fail(error.message, error.hint);
  throw error;
}

const rows = calibrationRows(pooled.sim, pooled.kind);
if (rows.length === 0) fail("the sim and kind runs share no scenario with a compared milestone");
const flags = flagsByScenario(rows, pooled.sim, pooled.kind);
const short = shortOfRuns(flags, minRuns);
if (short.length > 0) {
  fail(
    `fewer than ${minRuns} runs of ${short.map((f) => `${f.scenario} (sim ${f.runs.sim}, kind ${f.runs.kind})`).join(", ")}`,
    "run them with --repeat, or pass --min-runs to calibrate on fewer (the page's method asks for 5)",
  );
}

const machine = `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const page = renderCalibrationPage({ sim: pooled.sim, kind: pooled.kind, rows, flags, machine });
const docFile = join(PROJECT_ROOT, "bench", "results", "calibration-table.md");
await writeBetweenMarkers(
  docFile,
  "<!-- calibration table: written by bench/calibration.ts -->",
  "<!-- end of calibration table -->",
  page,
);

const rawDir = join(PROJECT_ROOT, "bench", "results", "calibration");
mkdirSync(rawDir, { recursive: true });
const rawFiles: string[] = [];
for (const summary of summaries.values()) {
  const file = join(rawDir, trimmedFileName(summary));
  writeFileSync(
    file,
    await format(JSON.stringify(trimSummary(summary)), { ...(await resolveConfig(file)), parser: "json" }),
  );
  rawFiles.push(`bench/results/calibration/${trimmedFileName(summary)}`);
}

const date = new Date().toISOString().slice(0, 10);
const out = join(PROJECT_ROOT, "bench", "results", `calibration-${date}.json`);
const flagged = rows.filter((r) => r.flagged).length;
writeFileSync(
  out,
  await format(
    JSON.stringify({
      ...provenance,
      machine,
      runs: `sim/kind per scenario: ${[...new Set(flags.map((f) => `${f.runs.sim}/${f.runs.kind}`))].join(", ")}`,
      sim: { runIds: pooled.sim.runIds, profile: pooled.sim.profile, builds: pooled.sim.shas },
      kind: { runIds: pooled.kind.runIds, profile: pooled.kind.profile, builds: pooled.kind.shas },
      flagged: { rows: flagged, of: rows.length, byScenario: flags },
      rawSummaries: rawFiles,
      rows,
    }),
    { ...(await resolveConfig(out)), parser: "json" },
  ),
);
console.log(page);
console.log(
  `\n${flagged} of ${rows.length} rows flagged; ${docFile}, ${out} and ${rawFiles.length} raw summaries written`,
);
