// Where rekindle keeps things outside the repo: the build cache and the state of running clusters.
import { accessSync, constants } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";

/** Build cache root: $REKINDLE_CACHE_DIR, else $XDG_CACHE_HOME/rekindle, else ~/.cache/rekindle. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env["REKINDLE_CACHE_DIR"];
  if (explicit) return explicit;
  return join(env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "rekindle");
}

/** State of background clusters: $REKINDLE_STATE_DIR, else $XDG_STATE_HOME/rekindle, else ~/.local/state/rekindle. */
export function stateRoot(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env["REKINDLE_STATE_DIR"];
  if (explicit) return explicit;
  return join(env["XDG_STATE_HOME"] ?? join(homedir(), ".local", "state"), "rekindle");
}

/** The first executable `name` in $PATH, or undefined. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env["PATH"] ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** The kubectl to run against a cluster rekindle did not build: $REKINDLE_KUBECTL, else kubectl on PATH. */
export function defaultKubectl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env["REKINDLE_KUBECTL"];
  return explicit !== undefined && explicit !== "" ? explicit : findOnPath("kubectl", env);
}
