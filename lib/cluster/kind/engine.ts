// The container engine kind runs on. Where privileged containers work on the user's engine
// (DOCKER_HOST or the default socket), that one, untouched. Where they fail (sandboxes that
// withhold CAP_SYS_RESOURCE), rekindle's private engine from scripts/kind-engine.sh: its own
// dockerd, socket, data root and config; never a change to the user's engine.
import { join } from "node:path";
import { RekindleError } from "../../errors.js";
import { runCommand } from "../../util/command.js";
import { PROJECT_ROOT } from "../../util/project-files.js";
import type { Progress } from "../../util/progress.js";

export const KIND_ENGINE_SCRIPT = join(PROJECT_ROOT, "scripts", "kind-engine.sh");

export interface KindEngine {
  /** DOCKER_HOST of the private engine, or undefined for the user's own. */
  dockerHost: string | undefined;
  /** True when this call started the private engine (so stop() stops it). */
  startedHere: boolean;
  /** Stops the private engine if this call started it; a no-op otherwise. */
  stop(): Promise<void>;
}

async function script(args: string[], signal?: AbortSignal): Promise<string> {
  const result = await runCommand("bash", [KIND_ENGINE_SCRIPT, ...args], {
    timeoutMs: 120_000,
    ...(signal ? { signal } : {}),
  });
  return result.stdout.trim();
}

/** What `kind-engine.sh check` says of the current engine: "ok", "privileged-fails" or "none". */
export async function probeEngine(signal?: AbortSignal): Promise<"ok" | "privileged-fails" | "none"> {
  try {
    await script(["check"], signal);
    return "ok";
  } catch (error) {
    const code = error instanceof RekindleError ? error.details["exitCode"] : undefined;
    return code === 3 ? "privileged-fails" : "none";
  }
}

/**
 * Picks the engine and, for the private one, sets DOCKER_HOST in this process (kind, the docker
 * CLI and testcontainers all read it). Call before anything connects to an engine.
 */
export async function ensureKindEngine(progress: Progress, signal?: AbortSignal): Promise<KindEngine> {
  const wasRunning = (await script(["status"], signal).catch(() => "")).startsWith("running");
  let host: string;
  try {
    host = await script(["ensure"], signal);
  } catch (error) {
    // The harness's infrastructure, not the system under test: exit 3 (lib/cli/exit-codes.ts).
    throw new RekindleError(
      "HARNESS_FAILED",
      "no container engine here can run kind's privileged node containers",
      {
        hint: `scripts/kind-engine.sh explains why above; it needs root and Debian's docker.io (dockerd, runc) and python3 to run rekindle's private engine`,
        cause: error,
      },
    );
  }
  if (host === "") {
    return { dockerHost: undefined, startedHere: false, stop: () => Promise.resolve() };
  }
  process.env["DOCKER_HOST"] = host;
  const startedHere = !wasRunning;
  progress.info(
    `privileged containers fail on the default container engine; kind runs on rekindle's private engine (${host}, ${startedHere ? "started now, stopped at the end" : "already running"}; scripts/kind-engine.sh)`,
  );
  return {
    dockerHost: host,
    startedHere,
    async stop() {
      if (startedHere) await script(["stop"]).catch(() => undefined);
    },
  };
}
