// A real kind binary for tests, built from the Go module proxy into the build cache (never a
// downloaded binary): GOBIN=<cache>/tools/kind-<version>/bin go install sigs.k8s.io/kind@<version>.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { findGoToolchain } from "../../lib/cluster/sim/go-toolchain.js";
import { PINNED_KIND_VERSION } from "../../lib/cluster/kind/cli.js";
import { runCommand } from "../../lib/util/command.js";
import { cacheRoot } from "../../lib/util/paths.js";

export { PINNED_KIND_VERSION };

export function kindBinaryPath(
  version: string = PINNED_KIND_VERSION,
  cacheDir: string = cacheRoot(),
): string {
  return join(cacheDir, "tools", `kind-${version}`, "bin", "kind");
}

/** The cached kind binary, built first when missing (about a minute cold, needs the Go proxy). */
export async function ensureKindBinary(version: string = PINNED_KIND_VERSION): Promise<string> {
  const binary = kindBinaryPath(version);
  if (existsSync(binary)) return binary;
  // kind's go.mod declares go 1.17.
  const go = await findGoToolchain({ minimumVersion: "1.17" });
  const bin = join(binary, "..");
  mkdirSync(bin, { recursive: true });
  await runCommand(go.command, ["install", `sigs.k8s.io/kind@${version}`], {
    // GOTOOLCHAIN=local: build with this Go, never fetch another toolchain.
    env: { ...process.env, GOBIN: bin, GOTOOLCHAIN: "local", CGO_ENABLED: "0" },
    timeoutMs: 15 * 60_000,
  });
  return binary;
}
