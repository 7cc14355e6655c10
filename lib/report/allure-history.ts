// Allure's trend and retry history live in `allure-report/history/`; `allure generate` reads them
// back only from `allure-results/history/`. Copying the previous run's history there before
// generating carries the history over from run to run.
import { cpSync, existsSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { RekindleError } from "../errors.js";

const HISTORY = "history";

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The history directory `--allure-history DIR` names: DIR may be a run's report directory,
 * its `allure-report/`, or the `history/` directory itself. Anything else is bad input.
 */
export function resolveAllureHistory(dir: string): string {
  const candidates = [join(dir, "allure-report", HISTORY), join(dir, HISTORY), dir];
  const found = candidates.find(
    (c) => isDirectory(c) && (basename(c) === HISTORY || existsSync(join(c, "history.json"))),
  );
  if (found === undefined) {
    throw new RekindleError("INVALID_INPUT", `--allure-history ${dir}: no Allure history there`, {
      hint: "name a previous run's report directory (reports/<run-id>), its allure-report/ or its allure-report/history/",
      details: { path: dir },
    });
  }
  return found;
}

/**
 * The newest `allure-report/history/` among the other runs beside `reportDir` (the same reports
 * root), by modification time; undefined when none has one (the first run, or no Java so far).
 */
export function previousAllureHistory(reportDir: string): string | undefined {
  const own = resolve(reportDir);
  const root = dirname(own);
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return undefined;
  }
  const histories = entries
    .map((name) => join(root, name))
    .filter((dir) => dir !== own)
    .map((dir) => join(dir, "allure-report", HISTORY))
    .filter(isDirectory)
    .map((path) => ({ path, mtimeMs: statSync(path).mtimeMs }));
  histories.sort((a, b) => b.mtimeMs - a.mtimeMs || b.path.localeCompare(a.path));
  return histories[0]?.path;
}

/**
 * Copies the history directory `from` into `<reportDir>/allure-results/history/` (files already
 * there are replaced). Returns the directory written, or undefined when `from` is not a directory.
 */
export function carryAllureHistory(from: string, reportDir: string): string | undefined {
  if (!isDirectory(from)) return undefined;
  const to = join(reportDir, "allure-results", HISTORY);
  cpSync(from, to, { recursive: true, force: true });
  return to;
}
