// `rekindle run -f`: scenario files (or directories of them) → ScenarioFiles, validated. Every
// problem of every file is reported at once, each as "file:line:column: message", in one
// INVALID_INPUT error; nothing is returned unless every file is valid.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, normalize, resolve } from "node:path";
import { errorMessage } from "../errors.js";
import { semanticProblems } from "./checks.js";
import { normalizeScenario } from "./normalize.js";
import { parseScenarioText } from "./parse.js";
import { problemsError, type Problem } from "./problems.js";
import type { RawScenario } from "./raw.js";
import type { ScenarioFile } from "./types.js";
import { schemaProblems } from "./validate.js";

/** The names a directory's scenario files end with. */
export const SCENARIO_FILE_EXTENSIONS = [".yaml", ".yml"] as const;

/** One file to load: as errors name it (the path as given) and where it is. */
interface FileToLoad {
  display: string;
  absolute: string;
}

/** The result for one file: the scenario, or what is wrong with it. */
export type FileResult = { ok: true; file: ScenarioFile } | { ok: false; problems: Problem[] };

/**
 * Loads scenario files. Each path is a file, or a directory whose *.yaml and *.yml scenario files
 * (apiVersion rekindle.dev/…; manifests beside them are left alone; not recursive) are loaded in
 * name order; a directory with none is an error. A file named twice is
 * loaded once. Errors name each file as given (a directory's files under the directory as given).
 */
export function loadScenarioFiles(paths: readonly string[]): ScenarioFile[] {
  const pathErrors: string[] = [];
  const files: FileToLoad[] = [];
  const seen = new Set<string>();
  if (paths.length === 0)
    pathErrors.push("no scenario file given; give a file or a directory of *.yaml files");
  for (const path of paths) {
    const expanded = expandPath(path);
    if (typeof expanded === "string") {
      pathErrors.push(expanded);
      continue;
    }
    for (const file of expanded) {
      if (seen.has(file.absolute)) continue;
      seen.add(file.absolute);
      files.push(file);
    }
  }
  const problems: Problem[] = [];
  const loaded: ScenarioFile[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file.absolute, "utf8");
    } catch (error) {
      pathErrors.push(`${file.display}: cannot read it: ${errorMessage(error)}`);
      continue;
    }
    const result = scenarioFromText(text, file.absolute, file.display);
    if (result.ok) loaded.push(result.file);
    else problems.push(...result.problems);
  }
  problems.push(...duplicateNames(loaded));
  if (pathErrors.length > 0 || problems.length > 0) throw problemsError(problems, pathErrors);
  return loaded;
}

/** A file's own files to load, or what is wrong with the path. */
function expandPath(path: string): FileToLoad[] | string {
  const absolute = resolve(path);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(absolute).isDirectory();
  } catch {
    return `${path}: no such file or directory`;
  }
  if (!isDirectory) return [{ display: normalize(path), absolute }];
  const names = readdirSync(absolute)
    .filter((name) => SCENARIO_FILE_EXTENSIONS.some((extension) => name.endsWith(extension)))
    .sort();
  // A scenario's directory often holds its manifests too: only rekindle's own documents are scenarios.
  const files = names
    .map((name) => ({ display: join(path, name), absolute: join(absolute, name) }))
    .filter(
      (file) => statSync(file.absolute).isFile() && isScenarioText(readFileSync(file.absolute, "utf8")),
    );
  if (files.length === 0) {
    const below = subdirectoriesWithScenarios(path, absolute);
    const hint =
      below.length > 0
        ? `; directories are not searched below their own files, and these hold scenario files: give them with -f each: ${below.join(", ")}`
        : "";
    return `${path}: a directory with no scenario file in it (a *.yaml or *.yml whose apiVersion is rekindle.dev/…)${hint}`;
  }
  return files;
}

/** The directory's immediate subdirectories that hold scenario files (for the hint of an empty one). */
function subdirectoriesWithScenarios(path: string, absolute: string): string[] {
  return readdirSync(absolute, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort()
    .filter((name) =>
      readdirSync(join(absolute, name), { withFileTypes: true }).some(
        (file) =>
          file.isFile() &&
          SCENARIO_FILE_EXTENSIONS.some((extension) => file.name.endsWith(extension)) &&
          isScenarioText(readFileSync(join(absolute, name, file.name), "utf8")),
      ),
    )
    .map((name) => join(path, name));
}

/** Whether a file's text is a scenario (its apiVersion rekindle's) rather than a manifest beside it. */
function isScenarioText(text: string): boolean {
  return /^apiVersion:\s*["']?rekindle\.dev\//m.test(text);
}

/**
 * One scenario file's text → its ScenarioFile, or every problem found in it. `path` is the file's
 * absolute path (relative paths in it resolve against its directory), `display` how errors name it.
 */
export function scenarioFromText(text: string, path: string, display = path): FileResult {
  const parsed = parseScenarioText(text, display);
  if (!parsed.ok) return parsed;
  const { data, positions } = parsed;
  const schema = schemaProblems(data, positions);
  if (schema.length > 0) return { ok: false, problems: schema };
  // The schema guarantees this shape.
  const raw = data as RawScenario;
  const file = normalizeScenario(raw, path, positions.keys);
  const semantic = semanticProblems(file, raw, positions);
  if (semantic.length > 0) return { ok: false, problems: semantic };
  return { ok: true, file };
}

/** Scenario names name report directories: one name, one file. */
function duplicateNames(files: readonly ScenarioFile[]): Problem[] {
  const problems: Problem[] = [];
  const first = new Map<string, ScenarioFile>();
  for (const file of files) {
    const earlier = first.get(file.name);
    if (earlier === undefined) {
      first.set(file.name, file);
      continue;
    }
    const where = earlier.positions.get("/metadata/name");
    problems.push({
      position: file.positions.get("/metadata/name") ?? { file: file.path, line: 1, column: 1 },
      message: `metadata.name ${JSON.stringify(file.name)} is also the name of ${where?.file ?? earlier.path}; scenario names are unique in a run`,
    });
  }
  return problems;
}
