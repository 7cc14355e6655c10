// Finds the Go toolchain used to build the sim binaries and checks it is new enough.
import { RekindleError } from "../errors.js";
import { runCommand } from "../util/command.js";
import { MINIMUM_GO_VERSION } from "./versions.js";

export interface GoToolchain {
  /** The go command as invoked (a path or "go" resolved on PATH). */
  command: string;
  /** e.g. "1.26.8" */
  version: string;
}

/** Parses "go1.26.8", "go1.26rc1" or "1.26" into [major, minor, patch]; undefined for "devel …". */
export function parseGoVersion(text: string): [number, number, number] | undefined {
  const match = /^(?:go)?(\d+)\.(\d+)(?:\.(\d+))?/.exec(text.trim());
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
}

export function goVersionAtLeast(version: string, minimum: string): boolean {
  const have = parseGoVersion(version);
  const want = parseGoVersion(minimum);
  if (!have || !want) return false;
  for (let i = 0; i < 3; i++) {
    const a = have[i] ?? 0;
    const b = want[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

export interface FindGoOptions {
  /** Path to go. Default: $REKINDLE_GO, else "go" on PATH. */
  goBinary?: string;
  minimumVersion?: string;
}

export async function findGoToolchain(options: FindGoOptions = {}): Promise<GoToolchain> {
  const command = options.goBinary ?? process.env["REKINDLE_GO"] ?? "go";
  const minimum = options.minimumVersion ?? MINIMUM_GO_VERSION;
  let reported: string;
  try {
    // GOTOOLCHAIN=local: report (and later build with) this toolchain, never a downloaded one.
    const result = await runCommand(command, ["env", "GOVERSION"], {
      env: { ...process.env, GOTOOLCHAIN: "local" },
      timeoutMs: 30_000,
    });
    reported = result.stdout.trim();
  } catch (error) {
    throw new RekindleError("TOOLCHAIN", `no usable Go toolchain at "${command}"`, {
      hint: `the sim provider builds Kubernetes, etcd and KWOK from Go modules and needs Go >= ${minimum}; install it (https://go.dev/dl or your package manager) or point REKINDLE_GO at a go binary`,
      cause: error,
      details: { command },
    });
  }
  const parsed = parseGoVersion(reported);
  if (!parsed) {
    throw new RekindleError(
      "TOOLCHAIN",
      `cannot tell the version of the Go toolchain at "${command}" (it says "${reported}")`,
      {
        hint: `use a released Go >= ${minimum} (REKINDLE_GO=/path/to/go)`,
      },
    );
  }
  const version = parsed.join(".");
  if (!goVersionAtLeast(version, minimum)) {
    throw new RekindleError(
      "TOOLCHAIN",
      `Go ${version} at "${command}" is too old: the sim binaries need Go >= ${minimum}`,
      {
        hint: `etcd and KWOK at their pinned versions declare go ${minimum}; install a newer Go or set REKINDLE_GO=/path/to/go`,
        details: { command, version, minimum },
      },
    );
  }
  return { command, version };
}
