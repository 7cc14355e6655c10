// Builds the sim provider's binaries (kube-apiserver, kube-controller-manager, kube-scheduler,
// etcd, kwok) from the Go module proxy into a per-version cache outside the repo. What is cached
// is never rebuilt: a component counts as cached once its manifest.json is written (last step).
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  openSync,
  closeSync,
} from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../../errors.js";
import { runCommand } from "../../util/command.js";
import { cacheRoot } from "../../util/paths.js";
import { silentProgress, type Progress } from "../../util/progress.js";
import { sleep } from "../../util/time.js";
import { isDaemonRunning } from "../../util/daemon.js";
import { findGoToolchain, type GoToolchain } from "./go-toolchain.js";
import { PINNED_SIM_VERSIONS, stagingVersionFor, type SimVersions } from "./versions.js";

export interface SimBinaries {
  kubectl: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  etcd: string;
  kwok: string;
  versions: SimVersions;
}

export interface BuildSimOptions {
  /** Default: PINNED_SIM_VERSIONS. */
  versions?: SimVersions;
  /** Default: cacheRoot() ($REKINDLE_CACHE_DIR or ~/.cache/rekindle). */
  cacheDir?: string;
  /** Default: $REKINDLE_GO or go on PATH. */
  goBinary?: string;
  progress?: Progress;
  signal?: AbortSignal;
}

type ComponentName = "kubernetes" | "etcd" | "kwok";

interface ComponentPlan {
  component: ComponentName;
  version: string;
  /** Main packages to build; each yields a binary named after its last path element. */
  packages: string[];
  binaries: string[];
  /** Writes go.mod for the wrapper module into `workDir`. */
  prepare: (go: GoToolchain, workDir: string, env: NodeJS.ProcessEnv, signal?: AbortSignal) => Promise<void>;
  ldflags: string;
}

interface Manifest {
  component: ComponentName;
  version: string;
  goVersion: string;
  builtAt: string;
  buildSeconds: number;
  binaries: Record<string, { sha256: string }>;
}

// kubectl is not needed by the harness; it is built so `sim up` users and tests have a matching one.
const KUBE_COMMANDS = ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"];

function kubeLdflags(version: string): string {
  const match = /^v(\d+)\.(\d+)\./.exec(version);
  const major = match?.[1] ?? "1";
  const minor = match?.[2] ?? "0";
  const flags: string[] = ["-s", "-w"];
  for (const pkg of ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"]) {
    flags.push(
      `-X ${pkg}.gitVersion=${version}`,
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitTreeState=clean`,
      `-X ${pkg}.gitCommit=rekindle-module-build`,
      `-X ${pkg}.buildDate=1970-01-01T00:00:00Z`,
    );
  }
  return flags.join(" ");
}

/** The `replace (...)` targets of k8s.io/kubernetes' own go.mod: its staging modules. */
export function stagingModulesFromGoMod(goMod: string): string[] {
  const block = /^replace \(\n([\s\S]*?)^\)/m.exec(goMod)?.[1] ?? "";
  const modules: string[] = [];
  for (const line of block.split("\n")) {
    const match = /^\s*(k8s\.io\/[\w.-]+)\s+=>\s+\.\/staging\//.exec(line);
    if (match?.[1]) modules.push(match[1]);
  }
  return modules;
}

/** go.mod of the wrapper module that lets `go build` resolve k8s.io/kubernetes from the proxy. */
export function kubernetesWrapperGoMod(version: string, stagingModules: readonly string[]): string {
  const staging = stagingVersionFor(version);
  return [
    "module rekindle.local/kubernetes-build",
    "",
    "go 1.24.0",
    "",
    // Only the main module's godebug applies; k/k sets this one for its binaries.
    "godebug default=go1.24",
    "",
    `require k8s.io/kubernetes ${version}`,
    "",
    "tool (",
    ...KUBE_COMMANDS.map((c) => `\tk8s.io/kubernetes/cmd/${c}`),
    ")",
    "",
    "replace (",
    ...stagingModules.map((m) => `\t${m} => ${m} ${staging}`),
    ")",
    "",
  ].join("\n");
}

export function etcdWrapperGoMod(version: string): string {
  // etcd's server module replaces its sibling modules with relative paths; pin them to the tag.
  const siblings = ["api/v3", "client/pkg/v3", "client/v3", "pkg/v3"];
  return [
    "module rekindle.local/etcd-build",
    "",
    "go 1.26.0",
    "",
    `require go.etcd.io/etcd/server/v3 ${version}`,
    "",
    "tool go.etcd.io/etcd/server/v3",
    "",
    "replace (",
    ...siblings.map((s) => `\tgo.etcd.io/etcd/${s} => go.etcd.io/etcd/${s} ${version}`),
    ")",
    "",
  ].join("\n");
}

export function kwokWrapperGoMod(version: string): string {
  return [
    "module rekindle.local/kwok-build",
    "",
    "go 1.26.0",
    "",
    `require sigs.k8s.io/kwok ${version}`,
    "",
    "tool sigs.k8s.io/kwok/cmd/kwok",
    "",
  ].join("\n");
}

function plans(versions: SimVersions): ComponentPlan[] {
  return [
    {
      component: "kubernetes",
      version: versions.kubernetes,
      packages: KUBE_COMMANDS.map((c) => `k8s.io/kubernetes/cmd/${c}`),
      binaries: KUBE_COMMANDS,
      ldflags: kubeLdflags(versions.kubernetes),
      async prepare(go, workDir, env, signal) {
        const info = await runCommand(
          go.command,
          ["mod", "download", "-json", `k8s.io/kubernetes@${versions.kubernetes}`],
          {
            env,
            signal,
            cwd: workDir,
          },
        );
        const goModPath = (JSON.parse(info.stdout) as { GoMod?: string }).GoMod;
        if (!goModPath)
          throw new RekindleError(
            "BUILD_FAILED",
            `go mod download gave no go.mod for k8s.io/kubernetes@${versions.kubernetes}`,
          );
        const staging = stagingModulesFromGoMod(readFileSync(goModPath, "utf8"));
        if (staging.length === 0) {
          throw new RekindleError(
            "BUILD_FAILED",
            `found no staging modules in k8s.io/kubernetes@${versions.kubernetes}'s go.mod`,
          );
        }
        writeFileSync(join(workDir, "go.mod"), kubernetesWrapperGoMod(versions.kubernetes, staging));
      },
    },
    {
      component: "etcd",
      version: versions.etcd,
      packages: ["go.etcd.io/etcd/server/v3"],
      binaries: ["etcd"],
      ldflags: "-s -w",
      prepare(_go, workDir) {
        writeFileSync(join(workDir, "go.mod"), etcdWrapperGoMod(versions.etcd));
        return Promise.resolve();
      },
    },
    {
      component: "kwok",
      version: versions.kwok,
      packages: ["sigs.k8s.io/kwok/cmd/kwok"],
      binaries: ["kwok"],
      ldflags: `-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${versions.kwok.replace(/^v/, "")}`,
      prepare(_go, workDir) {
        writeFileSync(join(workDir, "go.mod"), kwokWrapperGoMod(versions.kwok));
        return Promise.resolve();
      },
    },
  ];
}

function componentDir(cacheDir: string, component: ComponentName, version: string): string {
  return join(cacheDir, "sim", `${component}-${version}`);
}

function readManifest(dir: string): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Manifest;
  } catch {
    return undefined;
  }
}

function isCached(dir: string, plan: ComponentPlan): boolean {
  const manifest = readManifest(dir);
  return manifest !== undefined && plan.binaries.every((b) => existsSync(join(dir, "bin", b)));
}

function binariesFor(cacheDir: string, versions: SimVersions): SimBinaries {
  const kube = join(componentDir(cacheDir, "kubernetes", versions.kubernetes), "bin");
  return {
    kubectl: join(kube, "kubectl"),
    kubeApiserver: join(kube, "kube-apiserver"),
    kubeControllerManager: join(kube, "kube-controller-manager"),
    kubeScheduler: join(kube, "kube-scheduler"),
    etcd: join(componentDir(cacheDir, "etcd", versions.etcd), "bin", "etcd"),
    kwok: join(componentDir(cacheDir, "kwok", versions.kwok), "bin", "kwok"),
    versions,
  };
}

/** The cached binaries, or undefined when any component still needs a build. */
export function cachedSimBinaries(
  options: Pick<BuildSimOptions, "versions" | "cacheDir"> = {},
): SimBinaries | undefined {
  const versions = options.versions ?? PINNED_SIM_VERSIONS;
  const cacheDir = options.cacheDir ?? cacheRoot();
  const allCached = plans(versions).every((p) => isCached(componentDir(cacheDir, p.component, p.version), p));
  return allCached ? binariesFor(cacheDir, versions) : undefined;
}

/** Status of each component for `rekindle sim build --check` and error messages. */
export function simBuildStatus(
  options: Pick<BuildSimOptions, "versions" | "cacheDir"> = {},
): { component: string; version: string; dir: string; cached: boolean }[] {
  const versions = options.versions ?? PINNED_SIM_VERSIONS;
  const cacheDir = options.cacheDir ?? cacheRoot();
  return plans(versions).map((p) => {
    const dir = componentDir(cacheDir, p.component, p.version);
    return { component: p.component, version: p.version, dir, cached: isCached(dir, p) };
  });
}

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** Serialises builds across processes sharing a cache (two test runs, or CLI and tests). */
async function withBuildLock<T>(
  cacheDir: string,
  progress: Progress,
  signal: AbortSignal | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const lockPath = join(cacheDir, "sim", ".build.lock");
  mkdirSync(join(cacheDir, "sim"), { recursive: true });
  let reported = false;
  for (;;) {
    try {
      const fd = openSync(lockPath, "wx");
      writeFileSync(fd, JSON.stringify({ pid: process.pid }));
      closeSync(fd);
      break;
    } catch {
      let holder = 0;
      try {
        holder = (JSON.parse(readFileSync(lockPath, "utf8")) as { pid: number }).pid;
      } catch {
        // Lock file half written or gone: retry.
      }
      if (holder !== 0 && !isDaemonRunning({ pid: holder, startTicks: 0 })) {
        rmSync(lockPath, { force: true });
        continue;
      }
      if (!reported) {
        progress.info(`waiting for another rekindle build (pid ${holder}) to finish with ${lockPath}`);
        reported = true;
      }
      await sleep(2_000, signal);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

async function buildComponent(
  plan: ComponentPlan,
  go: GoToolchain,
  cacheDir: string,
  progress: Progress,
  signal?: AbortSignal,
): Promise<void> {
  const finalDir = componentDir(cacheDir, plan.component, plan.version);
  const workDir = join(cacheDir, "sim", "work", `${plan.component}-${plan.version}`);
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
        onLine: () => {
          compiled++;
          if (Date.now() - lastReport >= 15_000) {
            lastReport = Date.now();
            phase.update(
              `${compiled} packages compiled, ${Math.round((Date.now() - started) / 1000)}s elapsed`,
            );
          }
        },
      },
    );
    const manifest: Manifest = {
      component: plan.component,
      version: plan.version,
      goVersion: go.version,
      builtAt: new Date().toISOString(),
      buildSeconds: Math.round((Date.now() - started) / 1000),
      binaries: Object.fromEntries(
        plan.binaries.map((b) => [b, { sha256: sha256(join(stagingDir, "bin", b)) }]),
      ),
    };
    writeFileSync(join(stagingDir, "manifest.json"), JSON.stringify(manifest, null, 2));
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

/**
 * Returns the sim binaries, building whatever is not cached yet. Prints progress; a cold build
 * of all components takes tens of minutes on 2 cores.
 */
export async function ensureSimBinaries(options: BuildSimOptions = {}): Promise<SimBinaries> {
  const versions = options.versions ?? PINNED_SIM_VERSIONS;
  const cacheDir = options.cacheDir ?? cacheRoot();
  const progress = options.progress ?? silentProgress;
  const cached = cachedSimBinaries({ versions, cacheDir });
  if (cached) return cached;
  const go = await findGoToolchain(options.goBinary === undefined ? {} : { goBinary: options.goBinary });
  progress.info(`using Go ${go.version} (${go.command}); cache: ${join(cacheDir, "sim")}`);
  return withBuildLock(cacheDir, progress, options.signal, async () => {
    for (const plan of plans(versions)) {
      const dir = componentDir(cacheDir, plan.component, plan.version);
      if (isCached(dir, plan)) {
        progress.info(`${plan.component} ${plan.version}: cached`);
        continue;
      }
      await buildComponent(plan, go, cacheDir, progress, options.signal);
    }
    return binariesFor(cacheDir, versions);
  });
}
