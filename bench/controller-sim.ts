// The sim cluster and the controller of bench/controller.ts. The cluster boots in a child process
// (`rekindle sim up`, run from source), so nothing of its boot (2 000+ filler pods created, their
// objects and garbage) stays in this process, whose CPU and RSS are then the controller's. The
// controller is wired as `rekindle controller --sim-cluster DIR` wires it (controller-command.ts).
import { createWriteStream, existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { errorMessage } from "../lib/errors.js";
import { fenceConfiguration, simControllerTarget } from "../lib/cli/controller-command.js";
import { SimCluster } from "../lib/cluster/sim/cluster.js";
import { simLayout } from "../lib/cluster/sim/boot/layout.js";
import { RecoveryController } from "../lib/controller/controller.js";
import type { ControllerConfig } from "../lib/controller/config.js";
import { ensureNodeFenceCrd } from "../lib/controller/crd.js";
import { fenceDriverRegistry, genericFenceDrivers } from "../lib/controller/drivers/registry.js";
import { controllerSettings, parseControllerFlags } from "../lib/controller/flags.js";
import { loadKubeConfig, type k8s } from "../lib/kube/client.js";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import type { LogLine } from "./decisions.js";

export interface SimShape {
  name: string;
  /** Its state directory. */
  root: string;
  workers: number;
  zones: number;
  podsPerNode: number;
  ownKwoks: number;
  profile: string;
}

/** A bench's sim cluster of `workers` workers: named bench-<short>-<N>w, its state in reports/bench/<bench>-<N>w. */
export function benchSimShape(
  short: string,
  bench: string,
  workers: number,
  zones: number,
  size: Pick<SimShape, "podsPerNode" | "ownKwoks" | "profile">,
): SimShape {
  return {
    name: `bench-${short}-${workers}w`,
    root: join(PROJECT_ROOT, "reports", "bench", `${bench}-${workers}w`),
    workers,
    zones,
    podsPerNode: size.podsPerNode,
    ownKwoks: size.ownKwoks,
    profile: size.profile,
  };
}

/** `rekindle sim up` from source in a child process; resolves once the cluster is up. */
export async function bootSimInChild(shape: SimShape, signal: AbortSignal): Promise<void> {
  const main = pathToFileURL(join(PROJECT_ROOT, "lib", "cli", "main.ts")).href;
  const code = `const { main } = await import(${JSON.stringify(main)}); process.exitCode = await main(process.argv.slice(1));`;
  const args = [
    ...["sim", "up", "--name", shape.name, "--root", shape.root, "--profile", shape.profile],
    ...["--workers", String(shape.workers), "--zones", String(shape.zones)],
    ...["--pods-per-node", String(shape.podsPerNode), "--own-kwoks", String(shape.ownKwoks)],
  ];
  await execa(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code, ...args], {
    cwd: PROJECT_ROOT,
    stdout: "ignore",
    stderr: "inherit",
    cancelSignal: signal,
    forceKillAfterDelay: 60_000,
  });
}

/** Stops every process of the cluster at `root` if it has state there (a boot that failed cleans itself). */
export async function destroySim(root: string): Promise<void> {
  if (existsSync(simLayout(root).stateFile)) await SimCluster.open(root).destroy();
}

/** Tears a bench's cluster down; a failure is said, with how to stop it by hand, not thrown. */
export async function tearDownSim(shape: SimShape, progress: (message: string) => void): Promise<void> {
  progress(`${shape.workers} workers: tearing the cluster down`);
  await destroySim(shape.root).catch((error: unknown) => {
    progress(
      `teardown of ${shape.root} failed: ${errorMessage(error)} (stop it with: rekindle sim down --name ${shape.name})`,
    );
  });
}

export interface BenchController {
  kc: k8s.KubeConfig;
  controller: RecoveryController;
  config: ControllerConfig;
  /** The controller's log lines since it was made, timed (also written to the log file). */
  logLines: LogLine[];
}

/**
 * The controller on the sim cluster at `root`, with `rekindle controller --sim-cluster root
 * ...extraFlags`'s settings, logging to `logFile`. Not started.
 */
export async function simController(
  root: string,
  extraFlags: readonly string[],
  logFile: string,
): Promise<BenchController> {
  const flags = parseControllerFlags(["--sim-cluster", root, ...extraFlags]);
  const sim = await simControllerTarget(root);
  const { config } = controllerSettings(flags, { nodeMonitorGracePeriodMs: sim.nodeMonitorGracePeriodMs });
  const kc = loadKubeConfig(sim.kubeconfig);
  const drivers = fenceDriverRegistry([...genericFenceDrivers(kc), sim.driver]);
  const fenceConfig = fenceConfiguration(flags, drivers);
  await ensureNodeFenceCrd(kc, { install: true });
  const log = createWriteStream(logFile, { flags: "a" });
  const logLines: LogLine[] = [];
  const controller = new RecoveryController({
    kc,
    config: { ...config, identity: "bench-controller" },
    fenceConfig,
    drivers,
    log: (message) => {
      const atMs = Date.now();
      logLines.push({ atMs, message });
      log.write(`${new Date(atMs).toISOString()} ${message}\n`);
    },
  });
  return { kc, controller, config, logLines };
}
