// Reading summary.json files back (`compare`, `trend`): a path to the file or to its report
// directory, checked to be a rekindle summary, and whether several summaries are comparable at all.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../errors.js";
import type { RunSummary } from "./summary-types.js";

/** A summary with the path it was read from (messages name the file). */
export interface LoadedSummary {
  path: string;
  summary: RunSummary;
}

/** What a summary must agree on with another before their timings can be compared. */
export type IdentityField = "provider" | "profile" | "schemaVersion";

export interface SummaryMismatch {
  field: IdentityField;
  /** Each file's value, in the order given. */
  values: { path: string; value: string }[];
}

const READ_HINT =
  "pass the summary.json of a rekindle run (reports/<run-id>/summary.json) or its report directory";

/** The summary's schema version; summaries written before `schemaVersion` existed are version 1. */
export function schemaVersionOf(summary: RunSummary): number {
  const version: unknown = (summary as RunSummary & { schemaVersion?: unknown }).schemaVersion;
  return typeof version === "number" ? version : 1;
}

/** `path` itself, or `path/summary.json` when `path` is a report directory. */
export function summaryPathOf(path: string): string {
  try {
    return statSync(path).isDirectory() ? join(path, "summary.json") : path;
  } catch {
    return path;
  }
}

function notASummary(path: string, why: string): RekindleError {
  return new RekindleError("INVALID_INPUT", `${path} is not a rekindle summary.json (${why})`, {
    hint: READ_HINT,
    details: { path },
  });
}

/** Checks the fields compare and trend read; anything else in the file is left as it is. */
function checkShape(path: string, parsed: unknown): RunSummary {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw notASummary(path, "not a JSON object");
  const record = parsed as Record<string, unknown>;
  for (const field of ["runId", "provider", "profile", "startedAt"]) {
    if (typeof record[field] !== "string") throw notASummary(path, `no ${field}`);
  }
  const scenarios = record["scenarios"];
  if (!Array.isArray(scenarios)) throw notASummary(path, "no scenarios list");
  for (const [index, scenario] of scenarios.entries()) {
    const s = scenario as Record<string, unknown> | null;
    if (typeof s !== "object" || s === null || typeof s["id"] !== "string" || !Array.isArray(s["milestones"]))
      throw notASummary(path, `scenarios[${index}] has no id or milestones`);
    // Fields later schema versions added or that a hand-made summary may lack, as an empty value.
    if (!Array.isArray(s["expected"])) s["expected"] = [];
    if (typeof s["stats"] !== "object" || s["stats"] === null) s["stats"] = {};
    if (!Array.isArray(s["runs"])) s["runs"] = [];
  }
  return parsed as RunSummary;
}

/** Reads and checks one summary; a missing, unreadable or foreign file is bad input naming the file. */
export function readSummary(path: string): RunSummary {
  const file = summaryPathOf(path);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new RekindleError(
      "INVALID_INPUT",
      `cannot read summary ${file}: ${error instanceof Error ? error.message : String(error)}`,
      { hint: READ_HINT, details: { path: file } },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw notASummary(file, `not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  return checkShape(file, parsed);
}

export function loadSummary(path: string): LoadedSummary {
  return { path: summaryPathOf(path), summary: readSummary(path) };
}

function identity(summary: RunSummary, field: IdentityField): string {
  return field === "schemaVersion" ? String(schemaVersionOf(summary)) : summary[field];
}

/** The identity fields on which the summaries do not all agree. */
export function summaryMismatches(summaries: readonly LoadedSummary[]): SummaryMismatch[] {
  const fields: IdentityField[] = ["provider", "profile", "schemaVersion"];
  return fields.flatMap((field) => {
    const values = summaries.map((s) => ({ path: s.path, value: identity(s.summary, field) }));
    return new Set(values.map((v) => v.value)).size > 1 ? [{ field, values }] : [];
  });
}

function describeMismatch(m: SummaryMismatch): string {
  return `${m.field} (${m.values.map((v) => `${v.path}: ${v.value}`).join(", ")})`;
}

/**
 * Refuses summaries of different providers, profiles or schema versions (their timings are not
 * comparable) unless `allowMismatch`; then returns the warning line to print (none when they agree).
 */
export function checkComparable(summaries: readonly LoadedSummary[], allowMismatch: boolean): string[] {
  const mismatches = summaryMismatches(summaries);
  if (mismatches.length === 0) return [];
  if (!allowMismatch) {
    throw new RekindleError(
      "INVALID_INPUT",
      `the summaries differ in ${mismatches.map(describeMismatch).join("; ")}: their timings are not comparable`,
      {
        hint: "compare runs of one provider, profile and schema version, or pass --allow-mismatch to compare them anyway",
        details: { mismatches },
      },
    );
  }
  return [
    `warning: comparing runs that differ in ${mismatches.map(describeMismatch).join("; ")} (--allow-mismatch)`,
  ];
}
