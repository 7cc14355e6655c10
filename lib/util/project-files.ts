// Locates rekindle's own files (the project root, deploy/, its entry points) whether running from
// source (tsx) or from dist/.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("rekindle: cannot find the project root (package.json)");
    dir = parent;
  }
  return dir;
}

export const PROJECT_ROOT = projectRoot();

/** A file under deploy/: what rekindle ships and installs into clusters (manifests, Go sources). */
export function deployPath(...parts: string[]): string {
  return join(PROJECT_ROOT, "deploy", ...parts);
}

/**
 * A module of rekindle's own, relative to the calling module and without extension: the .ts file
 * when running from source (tsx), the compiled .js in dist/ otherwise.
 */
export function sourceOrCompiled(moduleUrl: string, relativePath: string): string {
  return fileURLToPath(new URL(`${relativePath}${moduleUrl.endsWith(".ts") ? ".ts" : ".js"}`, moduleUrl));
}

/**
 * Command line to run one of rekindle's own TypeScript/JavaScript entry points as a child
 * process: from dist/ when compiled, through the same loader (tsx) when running from source.
 */
export function nodeEntryCommand(
  moduleUrl: string,
  relativeEntry: string,
): { command: string; args: string[] } {
  const fromSource = moduleUrl.endsWith(".ts");
  const entry = sourceOrCompiled(moduleUrl, relativeEntry);
  // From source, load tsx by absolute URL so the child needs no particular working directory.
  const args = fromSource ? ["--import", import.meta.resolve("tsx"), entry] : [entry];
  return { command: process.execPath, args };
}
