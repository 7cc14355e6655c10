// One SVG timeline per scenario: a row per milestone, its expected window shaded, the observed
// time as a dot (green inside the window, red outside), on a shared time axis since the fault.
// A milestone that never came keeps its row: its window, and a red ✗ where it was due at the latest.
// Past a few nodes in the timeline, the nodes' own milestones fold per zone (chart-rows.ts).
import type { WindowCheck } from "../expect/assert.js";
import type { SummaryExpected } from "./summary-types.js";
import { escapeMarkup } from "../util/markup.js";
import { chartRows, rowLabel, type ChartMilestone, type ChartRow } from "./chart-rows.js";
import { zoneNodesRow, zoneStatesRow } from "./chart-zone-rows.js";

export interface ChartInput {
  title: string;
  subtitle: string;
  /** With `node` and `zone` where the run recorded them (summary.json's runs[].milestones). */
  milestones: readonly ChartMilestone[];
  checks: readonly WindowCheck[];
  /**
   * Every expected window since the fault (summary.json's `expected`: against actual anchors where
   * known, else nominal). Places a missing milestone whose own anchor never came either.
   */
  windows?: readonly SummaryExpected[];
  /** Nodes per zone when the fault started: aggregated rows say "12 of 40 nodes" (else "12 nodes"). */
  zoneSizes?: Readonly<Record<string, number>>;
  /** Nodes whose own milestones keep their rows when the rest are aggregated (besides those a window names). */
  keepNodes?: readonly string[];
  /** Aggregate per zone above this many nodes in the timeline (default AGGREGATE_ABOVE_NODES, 6). */
  aggregateAboveNodes?: number;
}

/** Where a milestone that never came was expected, and whether that rests on a missing anchor. */
interface MissingWindow {
  minMs: number;
  maxMs: number;
  /** The anchor never came either: the window is the nominal one, not one measured from it. */
  nominal: boolean;
}

const RED = "#c62828";

const ROW = 24;
/** Label column: at least this wide, wider for long milestone names (≈ 7 px a character at 12 px). */
const MIN_LEFT = 300;
const CHAR_PX = 7;
/** Width of the time axis. */
const PLOT = 660;
const RIGHT = 40;
const TOP = 64;

function niceStep(spanMs: number): number {
  const raw = spanMs / 8;
  const candidates = [500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000];
  return candidates.find((c) => c >= raw) ?? 600_000;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/**
 * The windows of expected milestones with no recorded time. A "must not happen" one (maxMs null)
 * is absent as it should be and is not listed; neither is one with no window known at all.
 */
function missingWindows(input: ChartInput, at: ReadonlyMap<string, number>): Map<string, MissingWindow> {
  const fallback = new Map((input.windows ?? []).map((w) => [w.name, w]));
  const missing = new Map<string, MissingWindow>();
  for (const check of input.checks) {
    if (at.has(check.name) || check.maxMs === null) continue;
    if (check.minMs !== undefined && typeof check.maxMs === "number") {
      missing.set(check.name, { minMs: check.minMs, maxMs: check.maxMs, nominal: false });
      continue;
    }
    const window = fallback.get(check.name);
    if (window && window.maxMs !== null) {
      missing.set(check.name, { minMs: window.minMs, maxMs: window.maxMs, nominal: true });
    }
  }
  return missing;
}

/** What every row of the timeline is drawn against. */
interface RowScale {
  /** ms since the fault → x. */
  x: (ms: number) => number;
  left: number;
  plotRight: number;
  checkByName: ReadonlyMap<string, WindowCheck>;
  missing: ReadonlyMap<string, MissingWindow>;
  at: ReadonlyMap<string, number>;
}

/** One milestone's row: its name, its height, its window check and its window when it never came. */
interface MilestoneRow {
  name: string;
  y: number;
  check: WindowCheck | undefined;
  late: MissingWindow | undefined;
}

/** The expected window as a bar (hatched when it must never happen, outlined red when missed). */
function windowBar(row: RowScale, { name, y, check, late }: MilestoneRow): string[] {
  if (check?.minMs === undefined && !late) return [];
  const { x, plotRight } = row;
  const minMs = late?.minMs ?? check?.minMs ?? 0;
  const x0 = x(minMs);
  const x1 = check?.maxMs === null ? plotRight : x(late?.maxMs ?? check?.maxMs ?? minMs);
  const fill = check?.maxMs === null ? "url(#never)" : "#cfe3f7";
  const outline = late ? ` stroke="${RED}" stroke-dasharray="3 2"` : "";
  return [
    `<rect x="${x0.toFixed(1)}" y="${y + 5}" width="${Math.max(2, x1 - x0).toFixed(1)}" height="${ROW - 10}" fill="${fill}" rx="2"${outline}><title>${escapeMarkup(`${name}: expected ${check?.why ?? ""}`)}</title></rect>`,
  ];
}

/** What was measured: a dot at the time (red unless ok), else the missing marker, else the verdict. */
function measuredMark(row: RowScale, { name, y, check, late }: MilestoneRow): string[] {
  const { x, left, plotRight } = row;
  const actual = row.at.get(name);
  if (actual !== undefined) {
    const ok = check === undefined || check.verdict === "ok";
    return [
      `<circle cx="${x(actual).toFixed(1)}" cy="${y + ROW / 2}" r="5" fill="${ok ? "#2e7d32" : RED}"><title>${escapeMarkup(`${name}: ${(actual / 1000).toFixed(2)}s${check ? ` (${check.verdict})` : ""}`)}</title></circle>`,
      `<text x="${(x(actual) + 8).toFixed(1)}" y="${y + 16}" fill="#333">${(actual / 1000).toFixed(1)}s</text>`,
    ];
  }
  if (late) return missingMarker(name, late, check?.after, x(late.maxMs), y, plotRight);
  if (check && check.verdict !== "ok")
    return [`<text x="${left + 4}" y="${y + 16}" fill="${RED}">${escapeMarkup(check.verdict)}</text>`];
  return [];
}

/** One milestone's row at height `y`: its name, its expected window, and what was measured (or not). */
function timelineRow(row: RowScale, name: string, y: number): string[] {
  const milestone: MilestoneRow = { name, y, check: row.checkByName.get(name), late: row.missing.get(name) };
  return [
    `<text x="${row.left - 8}" y="${y + 16}" text-anchor="end">${escapeMarkup(name)}</text>`,
    ...windowBar(row, milestone),
    ...measuredMark(row, milestone),
  ];
}

function drawRow(scale: RowScale, row: ChartRow, y: number): string[] {
  if (row.kind === "zone-nodes") return zoneNodesRow(row, scale, y);
  if (row.kind === "zone-states") return zoneStatesRow(row, scale, y);
  return timelineRow(scale, row.name, y);
}

export function timelineSvg(input: ChartInput): string {
  const checkByName = new Map(input.checks.map((c) => [c.name, c]));
  const names = [...new Set([...input.milestones.map((m) => m.name), ...input.checks.map((c) => c.name)])];
  const at = new Map(input.milestones.map((m) => [m.name, m.atMs]));
  const missing = missingWindows(input, at);
  const times = [
    0,
    ...input.milestones.map((m) => m.atMs),
    ...input.checks.flatMap((c) => [c.minMs ?? 0, typeof c.maxMs === "number" ? c.maxMs : 0]),
    ...[...missing.values()].flatMap((w) => [w.minMs, w.maxMs]),
  ].filter(Number.isFinite);
  const rows = chartRows(input, names);
  const labels = rows.map(rowLabel);
  const left = Math.max(MIN_LEFT, 20 + CHAR_PX * Math.max(0, ...labels.map((n) => n.length)));
  const width = left + PLOT + RIGHT;
  const minT = Math.min(...times);
  const maxT = Math.max(...times) * 1.05 + 1000;
  const x = (ms: number) => left + ((ms - minT) / (maxT - minT)) * (width - left - RIGHT);
  const height = TOP + rows.length * ROW + 50;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="16" font-weight="bold">${escapeMarkup(input.title)}</text>`,
    `<text x="12" y="42" fill="#555">${escapeMarkup(input.subtitle)} — shaded: expected window; dot: observed (green inside, red outside); ✗: never came, at the end of its window; hatched: must not happen</text>`,
    `<defs><pattern id="never" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#f4c7c3"/></pattern></defs>`,
  ];
  const step = niceStep(maxT - minT);
  for (let t = Math.ceil(minT / step) * step; t <= maxT; t += step) {
    const gx = x(t).toFixed(1);
    parts.push(
      `<line x1="${gx}" x2="${gx}" y1="${TOP - 8}" y2="${TOP + rows.length * ROW}" stroke="#e5e5e5"/>`,
    );
    parts.push(
      `<text x="${gx}" y="${TOP + rows.length * ROW + 16}" text-anchor="middle" fill="#555">${(t / 1000).toFixed(step < 1000 ? 1 : 0)}s</text>`,
    );
  }
  const zero = x(0).toFixed(1);
  parts.push(
    `<line x1="${zero}" x2="${zero}" y1="${TOP - 8}" y2="${TOP + rows.length * ROW}" stroke="#333" stroke-dasharray="4 3"/>`,
  );
  parts.push(`<text x="${zero}" y="${TOP - 12}" text-anchor="middle" fill="#333">fault</text>`);
  const row: RowScale = { x, left, plotRight: width - RIGHT, checkByName, missing, at };
  rows.forEach((chartRow, i) => {
    parts.push(...drawRow(row, chartRow, TOP + i * ROW));
  });
  parts.push(`</svg>`);
  return parts.join("\n");
}

/** A red ✗ at the window's right edge (when it was due at the latest) and a "missing" label. */
function missingMarker(
  name: string,
  window: MissingWindow,
  anchor: string | undefined,
  markerX: number,
  y: number,
  plotRight: number,
): string[] {
  const cy = y + ROW / 2;
  const due = `due ${seconds(window.minMs)}–${seconds(window.maxMs)}`;
  const label = window.nominal
    ? `missing (${due} nominal; ${anchor ?? "its anchor"} never came either)`
    : `missing (${due})`;
  // Right of the marker if it fits before the plot's edge, else left of it.
  const fitsRight = markerX + 10 + label.length * CHAR_PX <= plotRight;
  const labelX = fitsRight ? markerX + 10 : markerX - 10;
  return [
    `<g class="missing" stroke="${RED}" stroke-width="2"><title>${escapeMarkup(`${name}: never came; ${due}${window.nominal ? " (nominal)" : ""}`)}</title>` +
      `<line x1="${(markerX - 5).toFixed(1)}" y1="${cy - 5}" x2="${(markerX + 5).toFixed(1)}" y2="${cy + 5}"/>` +
      `<line x1="${(markerX - 5).toFixed(1)}" y1="${cy + 5}" x2="${(markerX + 5).toFixed(1)}" y2="${cy - 5}"/></g>`,
    `<text x="${labelX.toFixed(1)}" y="${y + 16}" fill="${RED}" font-weight="bold"${fitsRight ? "" : ' text-anchor="end"'}>${escapeMarkup(label)}</text>`,
  ];
}
