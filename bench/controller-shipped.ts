// The shipped controller at rest, as its own process: `node bin/rekindle.js controller` running the
// compiled dist/ (what a user or a pod runs), not the bench's tsx process, which carries the
// TypeScript transformer and the bench's own modules. Its CPU and RSS are read from /proc over a
// window after a warm-up. It runs alone: the bench starts its in-process controller only after
// this one has exited, so two controllers never act on one cluster.
import { createWriteStream, existsSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { RekindleError } from "../lib/errors.js";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { sleep } from "../lib/util/time.js";
import { groupUsage } from "./process-usage.js";

export interface ShippedRestOptions {
  /** The sim cluster's directory (`--sim-cluster`). */
  root: string;
  /** Flags given to `rekindle controller` after `--sim-cluster`. */
  controllerArgs: readonly string[];
  /** Node/V8 flags before the script (the shipped Deployment's command gives them). */
  nodeFlags: readonly string[];
  warmupSeconds: number;
  restSeconds: number;
  /** Where the controller's stdout and stderr go. */
  logFile: string;
  signal: AbortSignal;
  progress: (line: string) => void;
}

export interface ShippedRest {
  command: string;
  warmupSeconds: number;
  seconds: number;
  cpuPercentOfOneCore: number;
  /** RSS at the window's end, and the highest sampled each second (MB, 10^6 bytes). */
  rssMB: number;
  peakRssMB: number;
}

const MIB_TO_MB = 1.048576;
const round2 = (n: number) => Math.round(n * 100) / 100;

/** Builds dist/ (the controller measured is the compiled one of this tree). */
export async function buildDist(signal: AbortSignal): Promise<void> {
  const tsc = join(PROJECT_ROOT, "node_modules", ".bin", "tsc");
  await execa(tsc, ["-p", "tsconfig.build.json"], { cwd: PROJECT_ROOT, cancelSignal: signal });
  if (!existsSync(join(PROJECT_ROOT, "dist", "lib", "controller", "controller.js"))) {
    throw new RekindleError("BUILD_FAILED", "the build wrote no dist/lib/controller/controller.js");
  }
}

/** Runs the shipped controller alone over a warm-up and a rest window; stops it again. */
export async function measureShippedAtRest(options: ShippedRestOptions): Promise<ShippedRest> {
  const args = [
    join(PROJECT_ROOT, "bin", "rekindle.js"),
    "controller",
    "--sim-cluster",
    options.root,
    "--metrics-bind-address",
    "127.0.0.1:0",
    ...options.controllerArgs,
  ];
  const log = createWriteStream(options.logFile, { flags: "a" });
  // Its own process group, so groupUsage reads it (and only it) by its pid.
  const child = execa(process.execPath, [...options.nodeFlags, ...args], {
    cwd: PROJECT_ROOT,
    detached: true,
    reject: false,
    cancelSignal: options.signal,
    forceKillAfterDelay: 10_000,
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const pid = child.pid;
  if (pid === undefined) throw new RekindleError("PROCESS_EXITED", "the shipped controller did not start");
  const exitedEarly = child.then((result) => {
    throw new RekindleError(
      "PROCESS_EXITED",
      `the shipped controller exited during its rest window (exit ${String(result.exitCode)}); its log: ${options.logFile}`,
    );
  });
  exitedEarly.catch(() => undefined);
  try {
    await Promise.race([sleep(options.warmupSeconds * 1000, options.signal), exitedEarly]);
    options.progress(`the shipped controller (pid ${pid}): measuring at rest for ${options.restSeconds} s`);
    const usage = () => groupUsage([pid]).get(pid) ?? { rssMiB: 0, cpuSeconds: 0 };
    const before = usage();
    const startedAt = performance.now();
    let peakMiB = before.rssMiB;
    for (let second = 0; second < options.restSeconds; second += 1) {
      await Promise.race([sleep(1000, options.signal), exitedEarly]);
      peakMiB = Math.max(peakMiB, usage().rssMiB);
    }
    const after = usage();
    const seconds = (performance.now() - startedAt) / 1000;
    return {
      command: `node ${[...options.nodeFlags, ...args].map((a) => (a.startsWith(PROJECT_ROOT) ? a.slice(PROJECT_ROOT.length + 1) : a)).join(" ")}`,
      warmupSeconds: options.warmupSeconds,
      seconds: round2(seconds),
      cpuPercentOfOneCore: round2(((after.cpuSeconds - before.cpuSeconds) / seconds) * 100),
      rssMB: Math.round(after.rssMiB * MIB_TO_MB),
      peakRssMB: Math.round(peakMiB * MIB_TO_MB),
    };
  } finally {
    child.kill("SIGTERM");
    await child;
    log.end();
  }
}
