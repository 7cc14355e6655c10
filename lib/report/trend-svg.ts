// One scenario's trend as an inline SVG: x = the runs in startedAt order (labelled with date and git
// sha or run id), y = seconds since the fault, one coloured line of dots per milestone, a legend.
import type { ScenarioTrend, TrendRun } from "./trend.js";
import { escapeMarkup } from "../util/markup.js";

/** Colour-blind-friendly-ish cycle (Tableau 10 and a few more); a series past it reuses a colour dashed. */
const PALETTE = [
  "#4e79a7",
  "#f28e2b",
  "#e15759",
  "#76b7b2",
  "#59a14f",
  "#edc948",
  "#b07aa1",
  "#ff9da7",
  "#9c755f",
  "#79706e",
  "#1f77b4",
  "#2ca02c",
];

const LEFT = 64;
const TOP = 40;
const PLOT_HEIGHT = 300;
/** Room below the plot for the run labels, written downwards (≈ 6 px a character at 11 px). */
const BOTTOM = 270;
const RUN_STEP = 64;
const MIN_PLOT_WIDTH = 320;
const MAX_PLOT_WIDTH = 1100;
const LEGEND_GAP = 24;
const LEGEND_ROW = 16;
const LEGEND_WIDTH = 420;

/** "2026-11-24 03:22" from an ISO timestamp (UTC), or the text as it is. */
export function shortDate(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toISOString().slice(0, 16).replace("T", " ");
}

/** A run's axis label: its date and git sha (7 characters, "-dirty" kept), or its run id when the summary has no sha. */
export function runLabel(run: TrendRun): string {
  const sha = run.gitSha?.replace(/^([0-9a-f]{7})[0-9a-f]*/, "$1");
  return `${shortDate(run.startedAt)} · ${sha ?? run.runId}`;
}

function niceStep(spanMs: number): number {
  const raw = spanMs / 6;
  const candidates = [100, 250, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000];
  return candidates.find((c) => c >= raw) ?? 600_000;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)}s`;
}

export function trendSvg(trend: ScenarioTrend, runs: readonly TrendRun[]): string {
  const times = trend.series.flatMap((s) => s.points.map((p) => p.atMs));
  const minMs = Math.min(0, ...times);
  const step = niceStep(Math.max(1, Math.max(0, ...times) - minMs));
  const lowMs = Math.floor(minMs / step) * step;
  const highMs = Math.max(step, Math.ceil(Math.max(0, ...times) / step) * step);
  const plotWidth = Math.min(MAX_PLOT_WIDTH, Math.max(MIN_PLOT_WIDTH, runs.length * RUN_STEP));
  const x = (run: number) =>
    LEFT + (runs.length === 1 ? plotWidth / 2 : (run * plotWidth) / Math.max(1, runs.length - 1));
  const y = (ms: number) => TOP + PLOT_HEIGHT - ((ms - lowMs) / (highMs - lowMs)) * PLOT_HEIGHT;
  const legendX = LEFT + plotWidth + LEGEND_GAP;
  const width = legendX + LEGEND_WIDTH;
  const height = Math.max(TOP + PLOT_HEIGHT + BOTTOM, TOP + trend.series.length * LEGEND_ROW + 20);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11" role="img" aria-label="${escapeMarkup(trend.scenario)}">`,
    `<text x="${LEFT}" y="20" font-size="14" font-weight="bold">${escapeMarkup(trend.scenario)}</text>`,
  ];
  for (let ms = lowMs; ms <= highMs; ms += step) {
    out.push(
      `<line x1="${LEFT}" x2="${LEFT + plotWidth}" y1="${y(ms).toFixed(1)}" y2="${y(ms).toFixed(1)}" stroke="#e0e0e0"/>`,
      `<text x="${LEFT - 6}" y="${(y(ms) + 4).toFixed(1)}" text-anchor="end">${seconds(ms)}</text>`,
    );
  }
  runs.forEach((run, i) => {
    const failed = trend.outcomes[i] === "failed";
    const label = `${runLabel(run)}${failed ? " ✗" : ""}`;
    const bottom = TOP + PLOT_HEIGHT;
    out.push(
      `<g class="run" data-run="${escapeMarkup(run.runId)}"><title>${escapeMarkup(`${run.runId} ${run.startedAt}${run.gitSha !== undefined ? ` ${run.gitSha}` : ""}${failed ? " (failed)" : ""}`)}</title>`,
      `<line x1="${x(i).toFixed(1)}" x2="${x(i).toFixed(1)}" y1="${TOP}" y2="${bottom}" stroke="#f0f0f0"/>`,
      `<text transform="translate(${(x(i) - 4).toFixed(1)},${bottom + 8}) rotate(90)" fill="${failed ? "#c62828" : "#333"}">${escapeMarkup(label)}</text></g>`,
    );
  });
  out.push(
    `<text transform="translate(14,${TOP + PLOT_HEIGHT / 2}) rotate(-90)" text-anchor="middle">since the fault</text>`,
  );
  trend.series.forEach((series, i) => {
    const colour = PALETTE[i % PALETTE.length] ?? "#333";
    const dash = i >= PALETTE.length ? ` stroke-dasharray="4 3"` : "";
    const name = escapeMarkup(series.milestone);
    const points = series.points.map((p) => `${x(p.run).toFixed(1)},${y(p.atMs).toFixed(1)}`).join(" ");
    out.push(`<g class="series" data-milestone="${name}">`);
    out.push(`<polyline points="${points}" fill="none" stroke="${colour}" stroke-width="1.5"${dash}/>`);
    for (const p of series.points) {
      const run = runs[p.run];
      out.push(
        `<circle cx="${x(p.run).toFixed(1)}" cy="${y(p.atMs).toFixed(1)}" r="3" fill="${colour}" data-run="${escapeMarkup(run?.runId ?? "")}"><title>${name}: ${seconds(p.atMs)} (${escapeMarkup(run?.runId ?? "")})</title></circle>`,
      );
    }
    const ly = TOP + i * LEGEND_ROW;
    out.push(
      `<line x1="${legendX}" x2="${legendX + 18}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2"${dash}/>`,
      `<text x="${legendX + 24}" y="${ly + 4}">${name}</text>`,
      "</g>",
    );
  });
  if (trend.series.length === 0)
    out.push(`<text x="${LEFT + 10}" y="${TOP + 20}">no milestone recorded in any run</text>`);
  out.push("</svg>");
  return out.join("\n");
}
