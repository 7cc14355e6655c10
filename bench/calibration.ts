// Calibration: the same scenarios on the sim and on real kind kubelets, side by side. Reads the
// summary.json of a sim run and of a kind run (each `rekindle run --profile fast --repeat 3 …`),
// and writes the table of milestone p50s (sim, kind, difference; flagged where the difference is
// above max(1 s, 10 % of kind's)) between the markers of docs/calibration.md, whose explanations
// of each flagged row are written by hand. Also bench/results/calibration-<date>.json.
// Usage: npx tsx bench/calibration.ts <sim summary.json> <kind summary.json>
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import type { RunSummary, ScenarioSummary } from "../lib/report/summary.js";
import { PROJECT_ROOT } from "../lib/util/fixtures.js";

const [simFile, kindFile] = process.argv.slice(2);
if (simFile === undefined || kindFile === undefined) {
  console.error("usage: npx tsx bench/calibration.ts <sim summary.json> <kind summary.json>");
  process.exit(2);
}

function load(file: string, provider: string): RunSummary {
  const summary = JSON.parse(readFileSync(file, "utf8")) as RunSummary;
  if (summary.provider !== provider) {
    console.error(`${file}: a ${summary.provider} run, expected ${provider}`);
    process.exit(2);
  }
  return summary;
}

const sim = load(simFile, "sim");
const kind = load(kindFile, "kind");

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
const header = `Runs: sim \`${sim.runId}\` (profile ${sim.profile}) and kind \`${kind.runId}\` (profile ${kind.profile}); ${rows[0]?.runs.sim ?? 0} and ${rows[0]?.runs.kind ?? 0} runs of each scenario; ${machine}. Times are p50s in seconds since the fault; flagged: the difference is above max(1 s, 10 % of kind's).`;

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
writeFileSync(docFile, `${doc.slice(0, start + BEGIN.length)}\n\n${header}\n\n${table}\n\n${doc.slice(end)}`);

const date = new Date().toISOString().slice(0, 10);
mkdirSync(join(PROJECT_ROOT, "bench", "results"), { recursive: true });
const out = join(PROJECT_ROOT, "bench", "results", `calibration-${date}.json`);
writeFileSync(
  out,
  `${JSON.stringify({ machine, sim: { runId: sim.runId, profile: sim.profile }, kind: { runId: kind.runId, profile: kind.profile }, rows }, null, 2)}\n`,
);
console.log(table);
console.log(
  `\n${rows.filter((r) => r.flagged).length} of ${rows.length} rows flagged; ${docFile} and ${out} written`,
);
