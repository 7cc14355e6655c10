// One SVG timeline per scenario: a row per milestone, its expected window shaded, the observed
// time as a dot (green inside the window, red outside), on a shared time axis since the fault.
import type { WindowCheck } from "../expect/assert.js";
import type { SummaryMilestone } from "./summary.js";

export interface ChartInput {
  title: string;
  subtitle: string;
  milestones: readonly SummaryMilestone[];
  checks: readonly WindowCheck[];
}

const ROW = 24;
/** Label column: at least this wide, wider for long milestone names (≈ 7 px a character at 12 px). */
const MIN_LEFT = 300;
const CHAR_PX = 7;
/** Width of the time axis. */
const PLOT = 660;
const RIGHT = 40;
const TOP = 64;

function esc(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;" })[c] ?? c);
}

function niceStep(spanMs: number): number {
  const raw = spanMs / 8;
  const candidates = [500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000];
  return candidates.find((c) => c >= raw) ?? 600_000;
}

export function timelineSvg(input: ChartInput): string {
  const checkByName = new Map(input.checks.map((c) => [c.name, c]));
  const names = [...new Set([...input.milestones.map((m) => m.name), ...input.checks.map((c) => c.name)])];
  const at = new Map(input.milestones.map((m) => [m.name, m.atMs]));
  const times = [
    0,
    ...input.milestones.map((m) => m.atMs),
    ...input.checks.flatMap((c) => [c.minMs ?? 0, typeof c.maxMs === "number" ? c.maxMs : 0]),
  ].filter(Number.isFinite);
  const left = Math.max(MIN_LEFT, 20 + CHAR_PX * Math.max(0, ...names.map((n) => n.length)));
  const width = left + PLOT + RIGHT;
  const minT = Math.min(...times);
  const maxT = Math.max(...times) * 1.05 + 1000;
  const x = (ms: number) => left + ((ms - minT) / (maxT - minT)) * (width - left - RIGHT);
  const height = TOP + names.length * ROW + 50;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="16" font-weight="bold">${esc(input.title)}</text>`,
    `<text x="12" y="42" fill="#555">${esc(input.subtitle)} — shaded: expected window; dot: observed (green inside, red outside); hatched: must not happen</text>`,
    `<defs><pattern id="never" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#f4c7c3"/></pattern></defs>`,
  ];
  const step = niceStep(maxT - minT);
  for (let t = Math.ceil(minT / step) * step; t <= maxT; t += step) {
    const gx = x(t).toFixed(1);
    parts.push(
      `<line x1="${gx}" x2="${gx}" y1="${TOP - 8}" y2="${TOP + names.length * ROW}" stroke="#e5e5e5"/>`,
    );
    parts.push(
      `<text x="${gx}" y="${TOP + names.length * ROW + 16}" text-anchor="middle" fill="#555">${(t / 1000).toFixed(step < 1000 ? 1 : 0)}s</text>`,
    );
  }
  const zero = x(0).toFixed(1);
  parts.push(
    `<line x1="${zero}" x2="${zero}" y1="${TOP - 8}" y2="${TOP + names.length * ROW}" stroke="#333" stroke-dasharray="4 3"/>`,
  );
  parts.push(`<text x="${zero}" y="${TOP - 12}" text-anchor="middle" fill="#333">fault</text>`);
  names.forEach((name, i) => {
    const y = TOP + i * ROW;
    const check = checkByName.get(name);
    parts.push(`<text x="${left - 8}" y="${y + 16}" text-anchor="end">${esc(name)}</text>`);
    if (check?.minMs !== undefined) {
      const x0 = x(check.minMs);
      const x1 = check.maxMs === null ? width - RIGHT : x(check.maxMs ?? check.minMs);
      const fill = check.maxMs === null ? "url(#never)" : "#cfe3f7";
      parts.push(
        `<rect x="${x0.toFixed(1)}" y="${y + 5}" width="${Math.max(2, x1 - x0).toFixed(1)}" height="${ROW - 10}" fill="${fill}" rx="2"><title>${esc(`${name}: expected ${check.why}`)}</title></rect>`,
      );
    }
    const actual = at.get(name);
    if (actual !== undefined) {
      const ok = check === undefined || check.verdict === "ok";
      parts.push(
        `<circle cx="${x(actual).toFixed(1)}" cy="${y + ROW / 2}" r="5" fill="${ok ? "#2e7d32" : "#c62828"}"><title>${esc(`${name}: ${(actual / 1000).toFixed(2)}s${check ? ` (${check.verdict})` : ""}`)}</title></circle>`,
        `<text x="${(x(actual) + 8).toFixed(1)}" y="${y + 16}" fill="#333">${(actual / 1000).toFixed(1)}s</text>`,
      );
    } else if (check && check.verdict !== "ok") {
      parts.push(`<text x="${left + 4}" y="${y + 16}" fill="#c62828">${esc(check.verdict)}</text>`);
    }
  });
  parts.push(`</svg>`);
  return parts.join("\n");
}
