// Which rekindle is running: its package version and, from a git checkout, the commit and whether
// the work tree had changes. `rekindle version` prints it; a run's summary records it.
import { execFile } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { PROJECT_ROOT } from "./project-files.js";

const execFileAsync = promisify(execFile);

export interface BuildInfo {
  /** package.json's version. */
  version: string;
  /** The checked-out commit, or "unknown" outside a git checkout of rekindle (an npm install, an image). */
  gitSha: string;
  /** Tracked files differ from the commit (untracked files do not count, as in `git describe --dirty`); null when gitSha is unknown. */
  dirty: boolean | null;
}

/** How long each git command may take before the sha is reported unknown. */
const GIT_TIMEOUT_MS = 10_000;

async function git(root: string, args: readonly string[]): Promise<string> {
  const { stdout } = await execFileAsync("git", ["-C", root, ...args], {
    timeout: GIT_TIMEOUT_MS,
    encoding: "utf8",
  });
  return stdout.trim();
}

/** package.json's version at `root` (default: this rekindle's), or "unknown". */
export function rekindleVersion(root: string = PROJECT_ROOT): string {
  const parsed = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown };
  return typeof parsed.version === "string" ? parsed.version : "unknown";
}

/**
 * The commit and dirtiness of `root`, only when `root` is itself a git work tree's top: rekindle
 * installed under node_modules of someone's repository must not report that repository's commit.
 */
async function gitState(root: string): Promise<{ gitSha: string; dirty: boolean | null }> {
  try {
    const top = await git(root, ["rev-parse", "--show-toplevel"]);
    if (realpathSync(top) !== realpathSync(root)) return { gitSha: "unknown", dirty: null };
    const [gitSha, status] = await Promise.all([
      git(root, ["rev-parse", "HEAD"]),
      git(root, ["status", "--porcelain", "--untracked-files=no"]),
    ]);
    return { gitSha, dirty: status !== "" };
  } catch {
    // No git, not a checkout, or git refused (a safe.directory mismatch): nothing to say.
    return { gitSha: "unknown", dirty: null };
  }
}

/** Build info of the rekindle checkout or install at `root`. */
export async function buildInfoOf(root: string): Promise<BuildInfo> {
  return { version: rekindleVersion(root), ...(await gitState(root)) };
}

let cached: Promise<BuildInfo> | undefined;

/** This rekindle's build info; asked once per process (the tree does not change under a run). */
export function rekindleBuildInfo(): Promise<BuildInfo> {
  cached ??= buildInfoOf(PROJECT_ROOT);
  return cached;
}
