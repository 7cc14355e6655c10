// npm's cache holding every package package-lock.json names, filled on this machine (whose npm
// reaches the registry through its own configuration: proxy, CA file) for image builds that
// cannot reach it: the Dockerfile's `npm ci --offline` installs from it. Kept as
// <cache>/kind/npm-cache-<lock file hash>/ and never refilled while present.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../../../errors.js";
import { runCommand } from "../../../util/command.js";
import type { Progress } from "../../../util/progress.js";
import type { NodeRuntime } from "./node-base.js";

export function npmCachePath(cacheDir: string, lockText: string | Buffer): string {
  const hash = createHash("sha256").update(lockText).digest("hex").slice(0, 10);
  return join(cacheDir, "kind", `npm-cache-${hash}`);
}

/** The `npm ci` that fills the cache: nothing of the project runs (no sources; no scripts). */
export function npmFillArgs(runtime: NodeRuntime, cache: string): string[] {
  return [
    join(runtime.npmDir, "bin", "npm-cli.js"),
    "ci",
    "--cache",
    cache,
    "--ignore-scripts",
    "--no-audit",
    "--no-fund",
    "--no-update-notifier",
  ];
}

/** The cache directory (its _cacache inside), filled first when missing. */
export async function ensureNpmCache(options: {
  cacheDir: string;
  /** Holds package.json and package-lock.json. */
  projectRoot: string;
  /** Whose npm fills it (the base image's, so the cache is in the format that npm reads). */
  runtime: NodeRuntime;
  progress: Progress;
  signal?: AbortSignal;
}): Promise<string> {
  const lockFile = join(options.projectRoot, "package-lock.json");
  const path = npmCachePath(options.cacheDir, readFileSync(lockFile));
  if (existsSync(path)) return path;
  const partial = `${path}.partial`;
  const project = join(partial, "project");
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(project, { recursive: true });
  for (const file of ["package.json", "package-lock.json"])
    copyFileSync(join(options.projectRoot, file), join(project, file));
  const phase = options.progress.phase(
    `filling npm's cache from the registry for an offline build (npm ${options.runtime.npmVersion}, package-lock.json)`,
  );
  try {
    await runCommand(options.runtime.binary, npmFillArgs(options.runtime, join(partial, "cache")), {
      cwd: project,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    renameSync(join(partial, "cache"), path);
    phase.end(`kept in ${path}`);
    return path;
  } catch (error) {
    phase.end("failed");
    throw new RekindleError("BUILD_FAILED", "npm could not fetch the packages package-lock.json names", {
      hint: "this machine's npm must reach its registry (npm config get registry; proxy and cafile settings)",
      cause: error,
    });
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}
