// Where rekindle keeps things outside the repo: the build cache and the state of running clusters.
import { homedir } from "node:os";
import { join } from "node:path";

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
