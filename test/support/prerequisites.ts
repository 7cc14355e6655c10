// What an integration test needs from the machine (a Docker Engine, busybox, the Redfish emulator,
// a fence agent), and the rule when it is missing. `npm test` prepares all of it where it can
// (scripts/prepare-test-env.sh, scripts/kind-engine.sh ensure).
import { execa } from "execa";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

/** Set to 1 to let tests whose prerequisite is missing skip (saying why) instead of failing. */
export const ALLOW_SKIP_VARIABLE = "REKINDLE_ALLOW_SKIP";

/**
 * Fails the tests of `context` (a hook's or test's `this`) when `missing` names a missing
 * prerequisite: a gate that skips what it cannot run proves nothing. Only an explicit
 * REKINDLE_ALLOW_SKIP=1 turns that into a skip with the reason printed (mocha prints only the
 * titles of skipped tests); the mocha configs then allow pending tests too.
 */
export function requirePrerequisite(context: Mocha.Context, missing: string | undefined): void {
  if (missing === undefined) return;
  if (process.env[ALLOW_SKIP_VARIABLE] !== "1")
    throw new Error(
      `missing prerequisite: ${missing} (set ${ALLOW_SKIP_VARIABLE}=1 to skip these tests instead)`,
    );
  // In a hook, the tests skipped are its suite's.
  const runnable = context.test;
  const inHook = (runnable as { type?: string } | undefined)?.type === "hook";
  const title = (inHook ? runnable?.parent?.fullTitle() : runnable?.fullTitle()) ?? "";
  console.log(`  skipped ${title}: ${missing}`);
  recordSkip(title, missing);
  context.skip();
}

/** Reasons given so far, for the totals reporter's closing lines. */
export function recordSkip(title: string, reason: string): void {
  const reasons = ((globalThis as { rekindleSkipReasons?: string[] }).rekindleSkipReasons ??= []);
  reasons.push(`${title}: ${reason}`);
}

export const HINT =
  "`npm test` prepares it (scripts/prepare-test-env.sh, scripts/kind-engine.sh; packages and the engine need root)";

/** Why no Docker Engine can run stand-in nodes here, or undefined when one can. */
export async function dockerMissing(): Promise<string | undefined> {
  if (!existsSync("/bin/busybox"))
    return `no /bin/busybox for the stand-in node image (Debian: busybox-static); ${HINT}`;
  return engineMissing();
}

/** Why no Docker Engine answers (DOCKER_HOST or the default socket), or undefined when one does. */
export async function engineMissing(): Promise<string | undefined> {
  const info = await execa("docker", ["info", "--format", "{{.ServerVersion}}"], {
    reject: false,
    timeout: 10_000,
  });
  if (info.exitCode === 0) return undefined;
  const where = process.env["DOCKER_HOST"] ?? "the default socket";
  const detail =
    info.failed && info.exitCode === undefined ? "no docker CLI" : info.stderr.trim().split("\n").at(-1);
  return `no Docker Engine answers at ${where} (${detail ?? "no output"}); ${HINT}`;
}

/** Why a fence agent cannot run here, or undefined when it can. */
export function fenceAgentMissing(agent: string): string | undefined {
  // Where the fence-agent driver looks.
  const dirs = ["/usr/sbin", "/usr/bin", ...(process.env["PATH"] ?? "").split(delimiter)];
  return dirs.some((dir) => dir !== "" && existsSync(join(dir, agent)))
    ? undefined
    : `no ${agent} on /usr/sbin:/usr/bin:$PATH (Debian: fence-agents); ${HINT}`;
}
