// Calibration: the same scenarios on the sim and on real kind kubelets, side by side. Reads the
// summary.json of sim runs and of kind runs (`rekindle run --profile fast --repeat 3 …`; a
// scenario's runs in several files of one provider are pooled while it expects the same milestones),
// and writes the table of milestone p50s (sim, kind, difference; flagged where the difference is
// above max(1 s, 10 % of kind's)) between the markers of docs/calibration.md, whose explanations
// of each flagged row are written by hand. Also bench/results/calibration-<date>.json.
// Usage: npx tsx bench/calibration.ts --sim <summary.json>... --kind <summary.json>...
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { format, resolveConfig } from "prettier";
import { summarizeScenario, type RunSummary, type ScenarioSummary } from "../lib/report/summary.js";
import { PROJECT_ROOT } from "../lib/util/fixtures.js";
import { benchProvenance } from "./provenance.js";

const USAGE = "usage: npx tsx bench/calibration.ts --sim <summary.json>... --kind <summary.json>...";
const { values } = parseArgs({
  options: { sim: { type: "string", multiple: true }, kind: { type: "string", multiple: true } },
});
if (!values.sim?.length || !values.kind?.length) {
  console.error(USAGE);
  process.exit(2);
}
// Before docs/calibration.md is written: the dirty flag is the checkout's, not this script's output.
const provenance = benchProvenance();

interface Runs {
  runIds: string[];
  profile: string;
  scenarios: ScenarioSummary[];
}

/**
 * What a scenario expects, without the numbers (a summary's windows are resolved against one run's
 * anchors): which milestones, and which of them must never happen.
 */
function expectationShape(s: ScenarioSummary): string {
  return JSON.stringify(s.expected.map((e) => [e.name, e.maxMs === null]));
}

/**
 * The files' scenarios, runs of one scenario pooled across files while it expects the same
 * milestones; a file whose scenario expects others (it changed between the runs) replaces the
 * earlier runs of it.
 */
function load(files: readonly string[], provider: string): Runs {
  const byId = new Map<string, ScenarioSummary>();
  const runIds: string[] = [];
  const profiles = new Set<string>();
  for (const file of files) {
    const summary = JSON.parse(readFileSync(file, "utf8")) as RunSummary;
    if (summary.provider !== provider) {
      console.error(`${file}: a ${summary.provider} run, expected ${provider}\n${USAGE}`);
      process.exit(2);
    }
    runIds.push(summary.runId);
    profiles.add(summary.profile);
    for (const s of summary.scenarios) {
      const earlier = byId.get(s.id);
      const same = earlier !== undefined && expectationShape(earlier) === expectationShape(s);
      byId.set(s.id, same ? summarizeScenario(s.id, [...earlier.runs, ...s.runs], s.expected) : s);
    }
  }
  if (profiles.size !== 1) {
    console.error(`the ${provider} runs mix profiles (${[...profiles].join(", ")}); compare one profile`);
    process.exit(2);
  }
  return { runIds, profile: [...profiles][0] ?? "", scenarios: [...byId.values()] };
}

const sim = load(values.sim, "sim");
const kind = load(values.kind, "kind");

/** Milestones worth comparing: what the kubelet, the control plane and the controller did. */
const COMPARED =
  /^(node-|taint-added:|taint-removed:|evicted:|.*:(pod-terminated|pod-gone|replacement-created|replacement-running|recovered)$|fence:|event:NothingToRelease$)/;

export interface CalibrationRow {
  scenario: string;
  milestone: string;
  simMs: number;
  kindMs: number;
  runs: { sim: number; kind: number };
  flagged: boolean;
}

function p50(s: ScenarioSummary, name: string): number | undefined {
  return s.stats[name]?.p50;
}

const rows: CalibrationRow[] = [];
for (const k of kind.scenarios) {
  const s = sim.scenarios.find((x) => x.id === k.id);
  if (!s) continue;
  const names = [...new Set(k.milestones.map((m) => m.name))].filter((n) => COMPARED.test(n));
  for (const name of names) {
    const simMs = p50(s, name);
    const kindMs = p50(k, name);
    if (simMs === undefined || kindMs === undefined) continue;
    const diff = Math.abs(simMs - kindMs);
    rows.push({
      scenario: k.id,
      milestone: name,
      simMs,
      kindMs,
      runs: { sim: s.runs.length, kind: k.runs.length },
      flagged: diff > Math.max(1_000, 0.1 * Math.abs(kindMs)),
    });
  }
}
rows.sort((a, b) => a.scenario.localeCompare(b.scenario) || a.kindMs - b.kindMs);

const sec = (ms: number) => (ms / 1000).toFixed(1);
const signed = (ms: number) => `${ms >= 0 ? "+" : "−"}${(Math.abs(ms) / 1000).toFixed(1)}`;
const table = [
  "| scenario | milestone | sim p50 (s) | kind p50 (s) | sim − kind (s) | flagged |",
  "| --- | --- | --- | --- | --- | --- |",
  ...rows.map(
    (r) =>
      `| ${r.scenario} | \`${r.milestone}\` | ${sec(r.simMs)} | ${sec(r.kindMs)} | ${signed(r.simMs - r.kindMs)} | ${r.flagged ? "**yes**" : ""} |`,
  ),
].join("\n");

const machine = `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const ids = (r: Runs) => r.runIds.map((id) => `\`${id}\``).join(", ");
const runCounts = [...new Set(rows.map((r) => `${r.runs.sim}/${r.runs.kind}`))].join(", ");
const header = `Runs: sim ${ids(sim)} (profile ${sim.profile}) and kind ${ids(kind)} (profile ${kind.profile}); runs of each scenario (sim/kind): ${runCounts}; ${machine}. Times are p50s in seconds since the fault; flagged: the difference is above max(1 s, 10 % of kind's).`;

const docFile = join(PROJECT_ROOT, "docs", "calibration.md");
const BEGIN = "<!-- calibration table: written by bench/calibration.ts -->";
const END = "<!-- end of calibration table -->";
const doc = readFileSync(docFile, "utf8");
const start = doc.indexOf(BEGIN);
const end = doc.indexOf(END);
if (start < 0 || end < start) {
  console.error(`${docFile}: the markers ${BEGIN} … ${END} are missing`);
  process.exit(2);
}
// Formatted as the repository's lint expects (prettier), so a fresh table passes `npm run lint`.
writeFileSync(
  docFile,
  await format(`${doc.slice(0, start + BEGIN.length)}\n\n${header}\n\n${table}\n\n${doc.slice(end)}`, {
    ...(await resolveConfig(docFile)),
    parser: "markdown",
  }),
);

const date = new Date().toISOString().slice(0, 10);
mkdirSync(join(PROJECT_ROOT, "bench", "results"), { recursive: true });
const out = join(PROJECT_ROOT, "bench", "results", `calibration-${date}.json`);
writeFileSync(
  out,
  await format(
    JSON.stringify({
      ...provenance,
      machine,
      runs: `sim/kind per scenario: ${runCounts}`,
      sim: { runIds: sim.runIds, profile: sim.profile },
      kind: { runIds: kind.runIds, profile: kind.profile },
      rows,
    }),
    { ...(await resolveConfig(out)), parser: "json" },
  ),
);
console.log(table);
console.log(
  `\n${rows.filter((r) => r.flagged).length} of ${rows.length} rows flagged; ${docFile} and ${out} written`,
);
