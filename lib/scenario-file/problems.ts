// What is wrong with scenario files, one line each ("file:line:column: message"), gathered into one
// INVALID_INPUT error so a user sees every mistake of a file at once, not the first only.
import { RekindleError } from "../errors.js";
import type { SourcePosition } from "./types.js";

export interface Problem {
  position: SourcePosition;
  message: string;
}

/** At most this many problems are listed per file; the rest are counted. */
export const MAX_PROBLEMS_PER_FILE = 10;

export const FORMAT_HINT =
  "the scenario file format: docs/scenario-files.md (JSON Schema: docs/scenario.schema.json)";

export function formatPosition(position: SourcePosition): string {
  return `${position.file}:${position.line}:${position.column}`;
}

/** Sorted by line and column; past MAX_PROBLEMS_PER_FILE per file, one line says how many more. */
export function problemLines(problems: readonly Problem[]): string[] {
  const byFile = new Map<string, Problem[]>();
  for (const problem of problems) {
    const list = byFile.get(problem.position.file) ?? [];
    list.push(problem);
    byFile.set(problem.position.file, list);
  }
  const lines: string[] = [];
  for (const [file, list] of byFile) {
    const sorted = [...list].sort(
      (a, b) => a.position.line - b.position.line || a.position.column - b.position.column,
    );
    const seen = new Set<string>();
    const unique = sorted.filter((problem) => {
      const line = `${formatPosition(problem.position)}: ${problem.message}`;
      if (seen.has(line)) return false;
      seen.add(line);
      return true;
    });
    for (const problem of unique.slice(0, MAX_PROBLEMS_PER_FILE)) {
      lines.push(`${formatPosition(problem.position)}: ${problem.message}`);
    }
    const more = unique.length - MAX_PROBLEMS_PER_FILE;
    if (more > 0) lines.push(`${file}: ${more} more ${more === 1 ? "error" : "errors"} not shown`);
  }
  return lines;
}

/**
 * One error for every problem found; `paths` are lines about paths that could not be read (no
 * position to give). `details.problems` keeps the positioned ones structured.
 */
export function problemsError(problems: readonly Problem[], paths: readonly string[] = []): RekindleError {
  return new RekindleError("INVALID_INPUT", [...paths, ...problemLines(problems)].join("\n"), {
    hint: FORMAT_HINT,
    details: { problems: problems.map((p) => ({ ...p.position, message: p.message })), paths },
  });
}

/** "a, b, c" for a list of valid values. */
export function validList(values: readonly string[]): string {
  return values.join(", ");
}
