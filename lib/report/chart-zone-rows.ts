// The aggregated rows of a timeline chart (chart-rows.ts): one milestone over a zone's nodes as a
// span with a tick per node and a count, and a zone's states as coloured segments.
import { escapeMarkup } from "../util/markup.js";
import { rowLabel, zoneLabel, type ChartRow } from "./chart-rows.js";

/** What an aggregated row is drawn against (the chart's RowScale, in part). */
export interface ZoneRowScale {
  x: (ms: number) => number;
  left: number;
  plotRight: number;
}

/** Same height and label offsets as a milestone row (chart.ts), so the rows line up. */
const ROW = 24;
const CHAR_PX = 7;

const STATE_FILL: Readonly<Record<string, string>> = {
  Initial: "#e0e0e0",
  Normal: "#c8e6c9",
  PartialDisruption: "#ffcc80",
  FullDisruption: "#ef9a9a",
};

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

function label(row: ChartRow, scale: ZoneRowScale, y: number): string {
  return `<text x="${scale.left - 8}" y="${y + 16}" text-anchor="end">${escapeMarkup(rowLabel(row))}</text>`;
}

/** "12 of 40 nodes, 5.1s–9.8s" (the zone's size when known). */
export function zoneNodesText(row: Extract<ChartRow, { kind: "zone-nodes" }>): string {
  const times = row.times.map((t) => t.atMs);
  const first = Math.min(...times);
  const last = Math.max(...times);
  const count = row.zoneSize !== undefined ? `${row.times.length} of ${row.zoneSize}` : `${row.times.length}`;
  // "-1.0s to -0.7s": a dash between negative times reads as a minus.
  const span =
    first === last ? seconds(first) : `${seconds(first)}${first < 0 ? " to " : "–"}${seconds(last)}`;
  return `${count} node${row.zoneSize === 1 || (row.zoneSize === undefined && row.times.length === 1) ? "" : "s"}, ${span}`;
}

/** A span from the zone's first node to its last, a tick per node (one per pixel), the count after it. */
export function zoneNodesRow(
  row: Extract<ChartRow, { kind: "zone-nodes" }>,
  scale: ZoneRowScale,
  y: number,
): string[] {
  const { x, plotRight } = scale;
  const times = row.times.map((t) => t.atMs);
  const x0 = x(Math.min(...times));
  const x1 = x(Math.max(...times));
  const text = zoneNodesText(row);
  const ticks = [...new Set(times.map((t) => x(t).toFixed(0)))];
  const fitsRight = x1 + 10 + text.length * CHAR_PX <= plotRight;
  const nodes = row.times.map((t) => `${t.node} ${seconds(t.atMs)}`);
  const shown = nodes.length > 12 ? [...nodes.slice(0, 12), `… ${nodes.length - 12} more`] : nodes;
  return [
    `<g class="zone-nodes"><title>${escapeMarkup(`${zoneLabel(row.zone)}: ${row.base}, ${text}\n${shown.join("\n")}`)}</title>`,
    `<rect x="${x0.toFixed(1)}" y="${y + 7}" width="${Math.max(2, x1 - x0).toFixed(1)}" height="${ROW - 14}" fill="#b0bec5" rx="2"/>`,
    ...ticks.map((t) => `<line x1="${t}" x2="${t}" y1="${y + 4}" y2="${y + ROW - 4}" stroke="#37474f"/>`),
    `</g>`,
    label(row, scale, y),
    `<text x="${(fitsRight ? x1 + 10 : x0 - 10).toFixed(1)}" y="${y + 16}" fill="#333"${fitsRight ? "" : ' text-anchor="end"'}>${escapeMarkup(text)}</text>`,
  ];
}

/** The zone's state from each change to the next (the last to the plot's edge), named where it fits. */
export function zoneStatesRow(
  row: Extract<ChartRow, { kind: "zone-states" }>,
  scale: ZoneRowScale,
  y: number,
): string[] {
  const { x, plotRight } = scale;
  const parts = [label(row, scale, y)];
  row.changes.forEach((change, i) => {
    const x0 = x(change.atMs);
    const next = row.changes[i + 1];
    const x1 = next === undefined ? plotRight : x(next.atMs);
    const width = Math.max(2, x1 - x0);
    parts.push(
      `<rect x="${x0.toFixed(1)}" y="${y + 5}" width="${width.toFixed(1)}" height="${ROW - 10}" fill="${STATE_FILL[change.state] ?? "#e0e0e0"}" stroke="#555" stroke-width="0.5"><title>${escapeMarkup(`${zoneLabel(row.zone)}: ${change.state} at ${seconds(change.atMs)}`)}</title></rect>`,
    );
    if (change.state.length * CHAR_PX + 8 <= width)
      parts.push(
        `<text x="${(x0 + 4).toFixed(1)}" y="${y + 16}" fill="#333">${escapeMarkup(change.state)}</text>`,
      );
  });
  return parts;
}
