// signoff.md: the sign-off's facts as GitHub-flavoured Markdown (no charts), for
// $GITHUB_STEP_SUMMARY and for reading in a terminal.
import type { Fact, SignoffFacts } from "./signoff-facts.js";

/** Text safe in a Markdown table cell: no HTML, no cell breaks, one line. */
export function mdCell(text: string): string {
  return text
    .replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c] ?? c)
    .replace(/\|/g, "\\|")
    .replace(/\r?\n/g, " ");
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${header.map(mdCell).join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${row.map(mdCell).join(" | ")} |`),
  ];
}

function facts(rows: readonly Fact[]): string[] {
  return table(["what", "value"], rows);
}

export function signoffMarkdown(f: SignoffFacts): string {
  const lines = [
    `# rekindle sign-off: run ${mdCell(f.runId)}`,
    "",
    `**${f.verdict}** — ${mdCell(f.verdictLine)}`,
    "",
    `summary.json sha256: \`${f.summarySha256}\``,
    "",
    "## Versions",
    "",
    ...facts(f.versions),
    "",
  ];
  if (f.scenarios.length > 0 || f.skipped.length > 0) {
    lines.push(
      "## Scenarios",
      "",
      ...table(
        ["scenario", "verdict", "measured"],
        [
          ...f.scenarios.map((s) => [s.id, s.verdict, s.figure]),
          ...f.skipped.map((s) => [s.id, "SKIP", s.reason]),
        ],
      ),
      "",
    );
  }
  for (const s of f.scenarios) {
    lines.push(`### ${s.verdict} ${mdCell(s.id)}`, "");
    if (s.windows.length > 0) {
      lines.push(
        ...table(
          ["milestone", "expected window (since the fault)", "measured", ""],
          s.windows.map((w) => [w.milestone, w.window, w.measured, w.status]),
        ),
        "",
      );
    } else lines.push("no expected windows", "");
    if (s.budgets.length > 0) {
      lines.push(
        "#### Budgets",
        "",
        ...table(
          ["workload", "budget", "limit", "measured", "verdict"],
          s.budgets.map((b) => [b.workload, b.budget, b.limit, b.measured, b.verdict]),
        ),
        "",
      );
    }
    if (s.error !== undefined) lines.push("```", s.error.replaceAll("```", "'''"), "```", "");
  }
  if (f.knobs.length > 0) lines.push("## Timing knobs", "", ...facts(f.knobs), "");
  if (f.host.length > 0) lines.push("## Host", "", ...facts(f.host), "");
  return `${lines.join("\n")}\n`;
}
