// `rekindle compare` (a run against a baseline: the CI gate) and `rekindle trend` (many runs on one page).
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseOptions } from "../util/parse-options.js";
import { compareSummaries, parsePercent } from "../report/compare.js";
import { comparisonJson, formatComparison } from "../report/compare-format.js";
import { checkComparable, loadSummary } from "../report/summary-file.js";
import { buildTrend } from "../report/trend.js";
import { trendHtml } from "../report/trend-html.js";
import { RekindleError } from "../errors.js";
import { OUTPUT_OPTION, OUTPUT_USAGE, outputFormat, writeJson } from "./args.js";

export const COMPARE_USAGE = `rekindle compare <baseline summary.json|report dir> <new summary.json|report dir>
                 [--max-regression 20%] [--allow-mismatch] [-o text|json]
      the new run against the baseline: each scenario's recovery and milestones at p50, and at p90
      where both runs repeated (--repeat); exits 1 on a regression beyond the threshold (differences
      under 1 s are noise), a scenario or expected milestone missing on either side, or a scenario
      that failed in the new run; exits 2 when the runs differ in provider, profile or schema
      version, unless --allow-mismatch (then a warning is printed)`;

export const TREND_USAGE = `rekindle trend <summary.json|report dir>... [--out trend.html] [--allow-mismatch] ${OUTPUT_USAGE}
      one self-contained HTML page (inline SVG, no external resources): each scenario's milestones
      across the runs, in startedAt order; the runs must share provider, profile and schema version
      unless --allow-mismatch; -o json prints {out, provider, profile, runs: [{runId, startedAt,
      gitSha?, path}], scenarios: [{id, outcomes (by run, null where absent)}], warnings} instead of the line`;

export function compareCommand(args: string[]): number {
  const { values, positionals } = parseOptions({
    args,
    options: {
      "max-regression": { type: "string", default: "20%" },
      "allow-mismatch": { type: "boolean", default: false },
      output: { type: "string", short: "o", default: "text" },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${COMPARE_USAGE}\n`);
    return 0;
  }
  const format = outputFormat(values.output);
  const threshold = parsePercent(values["max-regression"]);
  if (positionals.length !== 2) {
    throw new RekindleError(
      "INVALID_INPUT",
      `rekindle compare takes two summary.json paths (baseline, new), got ${positionals.length}`,
      {
        hint: "rekindle compare reports/<old>/summary.json reports/<new>/summary.json [--max-regression 20%]",
      },
    );
  }
  const [baseline, current] = positionals.map(loadSummary) as [
    ReturnType<typeof loadSummary>,
    ReturnType<typeof loadSummary>,
  ];
  const warnings = checkComparable([baseline, current], values["allow-mismatch"]);
  for (const warning of warnings) process.stderr.write(`${warning}\n`);
  const comparison = compareSummaries(baseline.summary, current.summary, { maxRegression: threshold });
  process.stdout.write(
    format === "json"
      ? comparisonJson(comparison, baseline, current, warnings)
      : `${formatComparison(comparison)}\n`,
  );
  return comparison.verdict === "pass" ? 0 : 1;
}

export function trendCommand(args: string[]): number {
  const { values, positionals } = parseOptions({
    args,
    options: {
      out: { type: "string", default: "trend.html" },
      "allow-mismatch": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
      ...OUTPUT_OPTION,
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${TREND_USAGE}\n`);
    return 0;
  }
  const format = outputFormat(values.output);
  if (positionals.length === 0) {
    throw new RekindleError(
      "INVALID_INPUT",
      "rekindle trend needs at least one summary.json or report directory",
      {
        hint: "rekindle trend reports/*/summary.json --out trend.html",
      },
    );
  }
  const loaded = positionals.map(loadSummary);
  const warnings = checkComparable(loaded, values["allow-mismatch"]);
  for (const warning of warnings) process.stderr.write(`${warning}\n`);
  const trend = buildTrend(loaded);
  const out = resolve(values.out);
  try {
    writeFileSync(out, trendHtml(trend, warnings));
  } catch (error) {
    throw new RekindleError(
      "INVALID_INPUT",
      `cannot write --out ${out}: ${error instanceof Error ? error.message : String(error)}`,
      { hint: "--out names an HTML file in a directory that exists" },
    );
  }
  if (format === "json")
    writeJson({
      out,
      provider: trend.provider,
      profile: trend.profile,
      runs: trend.runs,
      scenarios: trend.scenarios.map((s) => ({ id: s.scenario, outcomes: s.outcomes.map((o) => o ?? null) })),
      warnings,
    });
  else
    process.stdout.write(`trend: ${out} (${trend.runs.length} runs, ${trend.scenarios.length} scenarios)\n`);
  return 0;
}
