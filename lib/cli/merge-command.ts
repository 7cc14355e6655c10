// `rekindle merge`: the shards of a CI matrix (`rekindle run --shard k/n`) joined into one report
// directory — summary.json, junit.xml, signoff.html/.md and charts/ — as one serial run writes them.
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseOptions } from "../util/parse-options.js";
import { RekindleError } from "../errors.js";
import { mergeShardSummaries, readShardSummary, type ShardSummary } from "../report/merge.js";
import { chartsOf } from "../report/parallel-join.js";
import type { RunSummary } from "../report/summary.js";
import { copyAllureResults, writeRunReports } from "../run/run-reports.js";
import { PROJECT_ROOT } from "../util/project-files.js";
import { consoleProgress } from "../util/progress.js";
import { OUTPUT_OPTION, OUTPUT_USAGE, outputFormat } from "./args.js";
import { EXIT_CODES } from "./exit-codes.js";
import { runResultJson, runResultText } from "./run-result.js";

export const MERGE_USAGE = `rekindle merge <summary.json|report dir>... [--out DIR] [--fail-on-skip] ${OUTPUT_USAGE}
      joins the summaries of every shard of one CI matrix (rekindle run --shard k/n) into one report
      directory as a serial run writes it: summary.json (merged.shards says which shard runs it came
      from, their hosts and how their environments differ), junit.xml, signoff.html and signoff.md
      (with the merged summary.json's sha256; also appended to $GITHUB_STEP_SUMMARY), charts/ and the
      shards' allure-results/; the same inputs give the same summary.json, byte for byte
      refuses (exit 2, naming the file and why): a file that cannot be read or does not conform to
      docs/summary.schema.json, one not run with --shard, a shard missing or given twice, shards of
      different n or selections (--suite/-f/--scenario), a scenario in two shards, and shards that
      differ in provider, profile, knob values, repeat, schema version, rekindle version or git sha;
      differences in host, cluster, Kubernetes or image versions are recorded and warned about
      exit 0 every scenario passed, 1 a scenario failed (or none ran), 2 the inputs cannot be
      merged, 3 a shard's harness broke, 130 a shard was interrupted (as rekindle run would have);
      --fail-on-skip: 1 also when a shard skipped a scenario (as rekindle run --fail-on-skip)
      default: --out reports/<merged run id>`;

/**
 * The merged run's exit code, as `rekindle run` of the whole selection would have ended
 * (`failOnSkip`: as with --fail-on-skip; default false).
 */
export function mergedExitCode(summary: RunSummary, failOnSkip = false): number {
  if (summary.error?.code === "ABORTED") return EXIT_CODES.interrupted;
  if (summary.error != null) return EXIT_CODES.infrastructure;
  const failed = summary.scenarios.filter((s) => s.outcome === "failed").length;
  if (failed > 0 || summary.scenarios.length === 0) return EXIT_CODES.failed;
  return failOnSkip && (summary.skipped?.length ?? 0) > 0 ? EXIT_CODES.failed : EXIT_CODES.passed;
}

/** --out must not be a shard's own report directory (its summary.json would be overwritten). */
function checkOut(out: string, shards: readonly ShardSummary[]): void {
  const clash = shards.find((s) => resolve(dirname(s.path)) === out);
  if (clash !== undefined)
    throw new RekindleError("INVALID_INPUT", `--out ${out} is the report directory of ${clash.path}`, {
      hint: "write the merged reports to a directory of their own, e.g. --out reports/merged",
    });
}

export function mergeCommand(args: string[]): number {
  const { values, positionals } = parseOptions({
    args,
    options: {
      out: { type: "string" },
      "fail-on-skip": { type: "boolean", default: false },
      ...OUTPUT_OPTION,
    },
    allowPositionals: true,
    strict: true,
  });
  const format = outputFormat(values.output);
  if (positionals.length === 0)
    throw new RekindleError("INVALID_INPUT", "rekindle merge needs the summary of every shard, got none", {
      hint: "rekindle merge shard-1/ shard-2/ … --out reports/merged",
    });
  const shards = positionals.map(readShardSummary);
  const { summary, warnings } = mergeShardSummaries(shards);
  const out = resolve(values.out ?? join(PROJECT_ROOT, "reports", summary.runId));
  checkOut(out, shards);
  for (const warning of warnings) process.stderr.write(`${warning}\n`);
  mkdirSync(join(out, "charts"), { recursive: true });
  const progress = consoleProgress();
  writeRunReports(out, summary, chartsOf(summary), progress);
  copyAllureResults(
    shards.map((s) => dirname(s.path)),
    out,
  );
  const result = { summary, reportDir: out, failed: 0 };
  process.stdout.write(format === "json" ? runResultJson(result) : mergedText(result));
  return mergedExitCode(summary, values["fail-on-skip"]);
}

function mergedText(result: { summary: RunSummary; reportDir: string; failed: number }): string {
  const { merged } = result.summary;
  const from =
    merged === undefined
      ? ""
      : `rekindle merge: ${merged.count} shards of ${merged.selected} selected scenarios`;
  return `${from}${runResultText(result)}`;
}
