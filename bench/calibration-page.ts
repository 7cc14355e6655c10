// The calibration's part of bench/results/calibration-table.md: the flagged count up front, a table per scenario
// (runs, rows, flagged), then every row with each provider's median and range.
import type { PooledRuns } from "./calibration-pool.js";
import { excuses, type CalibrationRow, type ScenarioFlags, type Spread } from "./calibration-rows.js";

export interface PageInput {
  sim: PooledRuns;
  kind: PooledRuns;
  rows: readonly CalibrationRow[];
  flags: readonly ScenarioFlags[];
  /** e.g. "2 cores, 24 GiB, Node v20.20.2". */
  machine: string;
}

const sec = (ms: number) => (ms / 1000).toFixed(1);
const signed = (ms: number) => `${ms >= 0 ? "+" : "−"}${(Math.abs(ms) / 1000).toFixed(1)}`;
const percent = (part: number, whole: number) => (whole === 0 ? "0" : ((100 * part) / whole).toFixed(0));
const spread = (s: Spread) => `${sec(s.p50)} (${sec(s.min)}–${sec(s.max)})`;
const ids = (r: PooledRuns) => r.runIds.map((id) => `\`${id}\``).join(", ");
const builds = (r: PooledRuns) =>
  r.shas.map((s) => (s === "unrecorded" ? s : `\`${s.slice(0, 12)}\``)).join(", ");

function excuseLine(sim: PooledRuns, kind: PooledRuns): string {
  const s = excuses(sim);
  const k = excuses(kind);
  return `Runs that passed only with an excused late milestone (the kubelet-retry allowance): sim ${s.excused} of ${s.runs}, kind ${k.excused} of ${k.runs}.`;
}

export function renderCalibrationPage({ sim, kind, rows, flags, machine }: PageInput): string {
  const flagged = rows.filter((r) => r.flagged).length;
  const lead = `**${flagged} of ${rows.length} rows flagged (${percent(flagged, rows.length)} %).** Flagged: the medians differ by more than max(1 s, 10 % of kind's).`;
  const provenance = `Runs: sim ${ids(sim)} (profile ${sim.profile}, build ${builds(sim)}) and kind ${ids(kind)} (profile ${kind.profile}, build ${builds(kind)}); ${machine}. Times are seconds since the fault: the median over the runs, and the range (min–max).`;
  const perScenario = [
    "| scenario | runs (sim/kind) | rows | flagged |",
    "| --- | --- | --- | --- |",
    ...flags.map(
      (f) =>
        `| ${f.scenario} | ${f.runs.sim}/${f.runs.kind} | ${f.rows} | ${f.flagged} (${percent(f.flagged, f.rows)} %) |`,
    ),
  ].join("\n");
  const table = [
    "| scenario | milestone | sim p50 (min–max) | kind p50 (min–max) | sim − kind | flagged |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.scenario} | \`${r.milestone}\` | ${spread(r.sim)} | ${spread(r.kind)} | ${signed(r.sim.p50 - r.kind.p50)} | ${r.flagged ? "**yes**" : ""} |`,
    ),
  ].join("\n");
  const excluded = [...sim.excluded, ...kind.excluded];
  const leftOut =
    excluded.length > 0
      ? [
          `Left out (runs superseded by a later change to their mechanism): ${excluded.map((e) => `\`${e}\``).join(", ")}.`,
        ]
      : [];
  return [lead, provenance, ...leftOut, excuseLine(sim, kind), perScenario, table].join("\n\n");
}
