// `rekindle trend`'s page: self-contained HTML (inline CSS and SVG, nothing fetched), so it opens
// offline and can be attached to a CI run as one file.
import type { Trend } from "./trend.js";
import { escapeMarkup } from "../util/markup.js";
import { shortDate, trendSvg } from "./trend-svg.js";

const STYLE = `body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 2em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; font-size: 0.9em; }
section { margin-bottom: 2.5em; overflow-x: auto; }
.warning { color: #b26a00; }`;

export function trendHtml(trend: Trend, warnings: readonly string[] = []): string {
  const title = `rekindle trend: ${trend.provider}, profile ${trend.profile}, ${trend.runs.length} runs`;
  const runRows = trend.runs.map(
    (run, i) =>
      `<tr><td>${i + 1}</td><td>${escapeMarkup(run.runId)}</td><td>${escapeMarkup(shortDate(run.startedAt))}</td><td>${escapeMarkup(run.gitSha ?? "—")}</td><td>${escapeMarkup(run.path)}</td></tr>`,
  );
  const sections = trend.scenarios.map(
    (s) =>
      `<section id="${escapeMarkup(s.scenario)}">\n<h2>${escapeMarkup(s.scenario)}</h2>\n${trendSvg(s, trend.runs)}\n</section>`,
  );
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeMarkup(title)}</title>
<style>
${STYLE}
</style>
</head>
<body>
<h1>${escapeMarkup(title)}</h1>
${warnings.map((w) => `<p class="warning">${escapeMarkup(w)}</p>`).join("\n")}
<p>Each milestone's time since the fault (p50 over a run's repeats), run by run in the order they started. A run label marked ✗ failed that scenario.</p>
<table>
<tr><th>#</th><th>run</th><th>started (UTC)</th><th>git sha</th><th>summary</th></tr>
${runRows.join("\n")}
</table>
${sections.join("\n")}
</body>
</html>
`;
}
