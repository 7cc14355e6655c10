// The kind CLI: $REKINDLE_KIND, else `kind` on PATH, else rekindle's own build of the pinned
// release from its Go module (never a downloaded binary), cached in <cache>/tools/kind-<version>/.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { runCommand } from "../util/command.js";
import { cacheRoot, findOnPath } from "../util/paths.js";
import type { Progress } from "../util/progress.js";
import { findGoToolchain } from "./go-toolchain.js";

/** The kind release rekindle's tests build and CI installs (`go install sigs.k8s.io/kind@…`). */
export const PINNED_KIND_VERSION = "v0.33.0";

export function kindBinaryPath(
  version: string = PINNED_KIND_VERSION,
  cacheDir: string = cacheRoot(),
): string {
  return join(cacheDir, "tools", `kind-${version}`, "bin", "kind");
}

/** The kind binary to use without building anything, or undefined when there is none. */
export function findKindBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env["REKINDLE_KIND"];
  if (explicit !== undefined && explicit !== "") return explicit;
  return findOnPath("kind", env) ?? (existsSync(kindBinaryPath()) ? kindBinaryPath() : undefined);
}

/** The cached build of the pinned kind, built first when missing (about a minute cold). */
export async function ensureKindBinary(
  version: string = PINNED_KIND_VERSION,
  options: { progress?: Progress; signal?: AbortSignal } = {},
): Promise<string> {
  const binary = kindBinaryPath(version);
  if (existsSync(binary)) return binary;
  // kind's go.mod declares go 1.17.
  const go = await findGoToolchain({ minimumVersion: "1.17" });
  const bin = join(binary, "..");
  mkdirSync(bin, { recursive: true });
  const phase = options.progress?.phase(`building kind ${version} from its Go module`);
  await runCommand(go.command, ["install", `sigs.k8s.io/kind@${version}`], {
    // GOTOOLCHAIN=local: build with this Go, never fetch another toolchain.
    env: { ...process.env, GOBIN: bin, GOTOOLCHAIN: "local", CGO_ENABLED: "0" },
    timeoutMs: 15 * 60_000,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  phase?.end("built");
  return binary;
}
