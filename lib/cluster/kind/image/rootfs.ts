// Debian root filesystems for the node image, made by mmdebstrap from Debian's packages (nothing
// else is fetched) and cached as tarballs: <cache>/kind/rootfs-<name>-<hash>.tar.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../../../errors.js";
import { runCommand } from "../../../util/command.js";
import { findOnPath } from "../../../util/paths.js";
import type { Progress } from "../../../util/progress.js";

/** Documentation, manuals and translations are left out (dpkg path filters), copyrights kept. */
const SLIM_DPKG_OPTIONS = [
  "path-exclude=/usr/share/man/*",
  "path-exclude=/usr/share/doc/*",
  "path-include=/usr/share/doc/*/copyright",
  "path-exclude=/usr/share/locale/*",
  "path-exclude=/usr/share/info/*",
];

export function rootfsPath(
  cacheDir: string,
  name: string,
  suite: string,
  packages: readonly string[],
): string {
  const hash = createHash("sha256")
    .update(JSON.stringify({ suite, packages, SLIM_DPKG_OPTIONS }))
    .digest("hex")
    .slice(0, 10);
  return join(cacheDir, "kind", `rootfs-${name}-${suite}-${hash}.tar`);
}

/** The cached tarball, made first when missing (about a minute, from Debian's mirrors). */
export async function ensureRootfs(options: {
  cacheDir: string;
  name: string;
  suite: string;
  packages: readonly string[];
  progress: Progress;
  signal?: AbortSignal;
}): Promise<string> {
  const path = rootfsPath(options.cacheDir, options.name, options.suite, options.packages);
  if (existsSync(path)) return path;
  if (findOnPath("mmdebstrap") === undefined) {
    throw new RekindleError(
      "NOT_FOUND",
      "mmdebstrap is not installed: it makes the node image's Debian root filesystem",
      {
        hint: "apt-get install mmdebstrap (npm test's scripts/prepare-test-env.sh installs it when run as root)",
      },
    );
  }
  mkdirSync(join(path, ".."), { recursive: true });
  const partial = `${path}.partial`;
  rmSync(partial, { force: true });
  const phase = options.progress.phase(
    `making the ${options.name} root filesystem (Debian ${options.suite}, mmdebstrap)`,
  );
  try {
    await runCommand(
      "mmdebstrap",
      [
        "--variant=minbase",
        `--include=${options.packages.join(",")}`,
        ...SLIM_DPKG_OPTIONS.map((o) => `--dpkgopt=${o}`),
        "--format=tar",
        options.suite,
        partial,
      ],
      {
        ...(options.signal ? { signal: options.signal } : {}),
        onLine: (line) => {
          if (line.startsWith("I: ")) phase.update(line.slice(3));
        },
      },
    );
    renameSync(partial, path);
    phase.end("made");
    return path;
  } catch (error) {
    rmSync(partial, { force: true });
    phase.end("failed");
    throw new RekindleError("BUILD_FAILED", `mmdebstrap could not make the ${options.name} root filesystem`, {
      hint: "it needs root and Debian's package mirrors (apt sources of this machine); its output is above",
      cause: error,
    });
  }
}
