// rekindle's own import graph, read from its TypeScript sources: which of its modules a command
// loads and which npm packages those modules import (the dependency tests and the controller
// image's package list, docker/controller/package.json, are computed from it); and which files
// name which, type imports included (the import-cycle check).
import { readdirSync, readFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

export interface ModuleImports {
  /** Repository-relative .ts paths of rekindle's own modules, loaded when this one is evaluated. */
  local: string[];
  /** Package specifiers ("mocha", "@kubernetes/client-node", "yaml/util") loaded when it is evaluated. */
  packages: string[];
  /** Package specifiers it loads later, by `import()`. */
  lazyPackages: string[];
}

/** Static `import … from "x"`, `export … from "x"` and `import "x"`; `import type` loads nothing. */
const STATIC_IMPORT = /^(?:import|export)\s+(?!type\s)(?:[\s\S]*?\s+from\s+)?"([^"]+)";/gm;
/** `import("x")` with a literal specifier. */
const DYNAMIC_IMPORT = /\bimport\(\s*"([^"]+)"\s*\)/g;

/** What the module at `path` (repository-relative .ts) imports. */
export function moduleImports(path: string, root = PROJECT_ROOT): ModuleImports {
  const source = readFileSync(join(root, path), "utf8");
  const local: string[] = [];
  const packages: string[] = [];
  for (const [, specifier = ""] of source.matchAll(STATIC_IMPORT)) {
    if (specifier.startsWith(".")) {
      local.push(relative(root, join(root, dirname(path), specifier.replace(/\.js$/, ".ts"))));
    } else if (!isBuiltin(specifier)) packages.push(specifier);
  }
  const lazyPackages = [...source.matchAll(DYNAMIC_IMPORT)]
    .map((m) => m[1] ?? "")
    .filter((s) => !s.startsWith(".") && !isBuiltin(s));
  return { local, packages, lazyPackages };
}

/** The repository-relative modules evaluated when `entries` are: static imports, transitively. */
export function loadedModules(entries: readonly string[], root = PROJECT_ROOT): Set<string> {
  const seen = new Set<string>();
  const pending = [...entries];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    pending.push(...moduleImports(file, root).local);
  }
  return seen;
}

/** The npm package a specifier names: "@scope/name/sub" → "@scope/name", "name/sub" → "name". */
export function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/");
}

/** The packages `modules` import, statically (and lazily too with `lazy`), sorted. */
export function importedPackages(
  modules: Iterable<string>,
  options: { lazy?: boolean; root?: string } = {},
): string[] {
  const names = new Set<string>();
  for (const module of modules) {
    const imports = moduleImports(module, options.root);
    for (const s of [...imports.packages, ...(options.lazy ? imports.lazyPackages : [])]) {
      names.add(packageName(s));
    }
  }
  return [...names].sort();
}

/** Every .ts module under `dirs` (repository-relative), tests excluded: what dist/ is compiled from. */
export function shippedModules(dirs: readonly string[] = ["lib", "suites"], root = PROJECT_ROOT): string[] {
  return dirs
    .flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: "utf8" }).map((f) => join(dir, f)),
    )
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".d.ts"))
    .sort();
}

/**
 * The modules `rekindle controller` evaluates when it starts: the CLI's entry (whose command table
 * loads each command lazily) and the controller command, with their static imports.
 */
export function controllerModules(root = PROJECT_ROOT): Set<string> {
  // The same image runs rekindle's node agent (deploy/agent/daemonset.yaml): its packages too.
  return loadedModules(
    ["lib/cli/main.ts", "lib/cli/controller-command.ts", "lib/agent/daemon-main.ts"],
    root,
  );
}

/**
 * The repository-relative .ts files `path` names by a relative specifier: `import`, `import type`,
 * `export … from` and literal `import("…")` (a type's `typeof import("…")` too), as TypeScript's
 * scanner reads them (never in a comment or a string). Unlike moduleImports, a type import counts:
 * it loads nothing, but it ties the two files together as much as a value import does.
 */
export function fileImports(path: string, root = PROJECT_ROOT): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(root, path), "utf8"), true, true);
  const named = importedFiles
    .map((f) => f.fileName)
    .filter((specifier) => specifier.startsWith("./") || specifier.startsWith("../"))
    .map((specifier) => relative(root, join(root, dirname(path), specifier.replace(/\.js$/, ".ts"))));
  return [...new Set(named)];
}

/**
 * Every .ts file under `dirs` (repository-relative, .d.ts and tests included) with the files of
 * that set it names (fileImports): the graph the import-cycle check runs on.
 */
export function fileGraph(dirs: readonly string[], root = PROJECT_ROOT): Map<string, string[]> {
  const files = dirs
    .flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: "utf8" }).map((f) => join(dir, f)),
    )
    .filter((f) => f.endsWith(".ts"))
    .sort();
  const known = new Set(files);
  return new Map(files.map((file) => [file, fileImports(file, root).filter((f) => known.has(f))]));
}
