// Builds one component: wrapper module, `go mod tidy`, `go build` with progress every 15 s, then
// an atomic move into the cache with its manifest (written last: a half build never counts).
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../errors.js";
import { runCommand } from "../util/command.js";
import type { Progress } from "../util/progress.js";
import { componentDir, writeManifest } from "./build-cache.js";
import type { ComponentPlan } from "./build-plan.js";
import type { GoToolchain } from "./go-toolchain.js";

const PROGRESS_EVERY_MS = 15_000;

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

export async function buildComponent(
  plan: ComponentPlan,
  go: GoToolchain,
  cacheDir: string,
  progress: Progress,
  signal?: AbortSignal,
): Promise<void> {
  const group = plan.cacheGroup ?? "sim";
  const finalDir = componentDir(cacheDir, plan.component, plan.version, group);
  const workDir = join(cacheDir, group, "work", `${plan.component}-${plan.version}`);
  const stagingDir = `${finalDir}.partial`;
  rmSync(stagingDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  mkdirSync(join(stagingDir, "bin"), { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GOTOOLCHAIN: "local",
    GOFLAGS: "-mod=mod",
    CGO_ENABLED: "0",
    GOWORK: "off",
  };
  const phase = progress.phase(`building ${plan.component} ${plan.version} (${plan.binaries.join(", ")})`);
  const started = Date.now();
  try {
    await plan.prepare(go, workDir, env, signal);
    phase.update("resolving modules (go mod tidy)");
    await runCommand(go.command, ["mod", "tidy"], { cwd: workDir, env, signal });
    let compiled = 0;
    let lastReport = Date.now();
    phase.update("compiling (cold builds take minutes; cached afterwards)");
    // One package: -o names the file. Several: -o is a directory and each binary is named after
    // its package (a /vN suffix would make that "server" for etcd, hence the single-file form).
    const output =
      plan.packages.length === 1
        ? join(stagingDir, "bin", plan.binaries[0] ?? "")
        : `${join(stagingDir, "bin")}/`;
    await runCommand(
      go.command,
      [
        "build",
        "-v",
        "-trimpath",
        "-tags",
        "selinux,notest,grpcnotrace",
        "-ldflags",
        plan.ldflags,
        "-o",
        output,
        ...plan.packages,
      ],
      {
        cwd: workDir,
        env,
        signal,
        // `go build -v` prints one line per package compiled.
        onLine: () => {
          compiled++;
          if (Date.now() - lastReport >= PROGRESS_EVERY_MS) {
            lastReport = Date.now();
            phase.update(
              `${compiled} packages compiled, ${Math.round((Date.now() - started) / 1000)}s elapsed`,
            );
          }
        },
      },
    );
    writeManifest(stagingDir, {
      component: plan.component,
      version: plan.version,
      goVersion: go.version,
      builtAt: new Date().toISOString(),
      buildSeconds: Math.round((Date.now() - started) / 1000),
      binaries: Object.fromEntries(
        plan.binaries.map((b) => [b, { sha256: sha256(join(stagingDir, "bin", b)) }]),
      ),
    });
    rmSync(finalDir, { recursive: true, force: true });
    renameSync(stagingDir, finalDir);
    phase.end("built");
  } catch (error) {
    rmSync(stagingDir, { recursive: true, force: true });
    phase.end("failed");
    if (error instanceof RekindleError && error.code === "COMMAND_FAILED") {
      throw new RekindleError("BUILD_FAILED", `building ${plan.component} ${plan.version} failed`, {
        details: { ...error.details, workDir },
        hint: "the Go module proxy must be reachable (GOPROXY) for a cold build; the command and its output are above",
        cause: error,
      });
    }
    throw error;
  }
}
