// signoff.html: the sign-off as one self-contained page (inline CSS, each scenario's timeline
// chart as inline SVG, no script, no external resource): it opens offline, from an artifact.
import type { BudgetRow, Fact, ScenarioSignoff, SignoffFacts } from "./signoff-facts.js";
import { escapeMarkup } from "../util/markup.js";

const CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; } h3 { margin-top: 1.5em; }
table { border-collapse: collapse; margin: .5em 0; } td, th { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } code, .mono { font-family: ui-monospace, monospace; font-size: 12.5px; }
.verdict { font-size: 1.2em; padding: .5em 1em; border-radius: 4px; display: inline-block; }
.PASSED, .PASS, .within, .absent, .met { background: #e8f5e9; } .FAILED, .FAIL, .late, .early, .missing, .HAPPENED, .MISSED { background: #ffebee; }
.HARNESS, .INTERRUPTED { background: #fff3e0; } .SKIP { background: #f4f4f4; }
pre { background: #f8f8f8; padding: .7em; overflow-x: auto; white-space: pre-wrap; }
svg { max-width: 100%; height: auto; }
`;

/** A CSS class for a status or verdict (its first word). */
function cls(text: string): string {
  return (text.split(" ")[0] ?? "").replace(/[^A-Za-z]/g, "");
}

function factTable(rows: readonly Fact[]): string {
  const body = rows.map(([k, v]) => `<tr><th>${escapeMarkup(k)}</th><td>${escapeMarkup(v)}</td></tr>`);
  return `<table>${body.join("")}</table>`;
}

function statusCell(status: string): string {
  return `<td class="${cls(status)}">${escapeMarkup(status)}</td>`;
}

/** The chart as inline SVG, only if it is one (never markup of another kind). */
function inlineChart(svg: string | undefined): string {
  return svg !== undefined && svg.trimStart().startsWith("<svg") ? `<figure>${svg}</figure>` : "";
}

/** The expected windows against the measured times. */
function windowTable(s: ScenarioSignoff): string {
  if (s.windows.length === 0) return "<p>no expected windows</p>";
  const rows = s.windows.map(
    (w) =>
      `<tr><td class="mono">${escapeMarkup(w.milestone)}</td><td>${escapeMarkup(w.window)}</td><td>${escapeMarkup(w.measured)}</td>${statusCell(w.status)}</tr>`,
  );
  return `<table><tr><th>milestone</th><th>expected window (since the fault)</th><th>measured</th><th></th></tr>${rows.join("")}</table>`;
}

/** The scenario file's budgets against what was measured; nothing when it has none. */
function budgetTable(budgets: readonly BudgetRow[]): string {
  if (budgets.length === 0) return "";
  const rows = budgets.map(
    (b) =>
      `<tr><td>${escapeMarkup(b.workload)}</td><td>${escapeMarkup(b.budget)}</td><td>${escapeMarkup(b.limit)}</td><td>${escapeMarkup(b.measured)}</td>${statusCell(b.verdict)}</tr>`,
  );
  return `<h4>Budgets</h4><table><tr><th>workload</th><th>budget</th><th>limit</th><th>measured</th><th>verdict</th></tr>${rows.join("")}</table>`;
}

export function signoffHtml(f: SignoffFacts, charts: ReadonlyMap<string, string>): string {
  const scenarioRows = [
    ...f.scenarios.map(
      (s) =>
        `<tr><td><a href="#${escapeMarkup(s.id)}">${escapeMarkup(s.id)}</a></td><td class="${s.verdict}">${s.verdict}</td><td>${escapeMarkup(s.figure)}</td></tr>`,
    ),
    ...f.skipped.map(
      (s) =>
        `<tr><td>${escapeMarkup(s.id)}</td><td class="SKIP">SKIP</td><td>${escapeMarkup(s.reason)}</td></tr>`,
    ),
  ];
  const details = f.scenarios.map((s) => {
    const error = s.error === undefined ? "" : `<pre>${escapeMarkup(s.error)}</pre>`;
    return `<section id="${escapeMarkup(s.id)}"><h3><span class="${s.verdict}">${s.verdict}</span> ${escapeMarkup(s.id)}</h3><p>${escapeMarkup(s.figure)}</p>${windowTable(s)}${budgetTable(s.budgets)}${error}${inlineChart(charts.get(s.id))}</section>`;
  });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>rekindle sign-off: run ${escapeMarkup(f.runId)}</title>
<style>${CSS}</style>
</head>
<body>
<h1>rekindle sign-off: run ${escapeMarkup(f.runId)}</h1>
<p class="verdict ${cls(f.verdict)}"><strong>${escapeMarkup(f.verdict)}</strong> — ${escapeMarkup(f.verdictLine)}</p>
<p>summary.json sha256: <code>${f.summarySha256}</code></p>
<h2>Versions</h2>
${factTable(f.versions)}
${scenarioRows.length > 0 ? `<h2>Scenarios</h2>\n<table><tr><th>scenario</th><th>verdict</th><th>measured</th></tr>${scenarioRows.join("")}</table>` : ""}
${details.join("\n")}
${f.knobs.length > 0 ? `<h2>Timing knobs</h2>\n${factTable(f.knobs)}` : ""}
${f.host.length > 0 ? `<h2>Host</h2>\n${factTable(f.host)}` : ""}
</body>
</html>
`;
}
