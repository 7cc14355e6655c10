// Builds the sim provider's binaries (kube-apiserver, kube-controller-manager, kube-scheduler,
// etcd, kwok) from the Go module proxy into a per-version cache outside the repo. What is cached
// is never rebuilt. The parts: build-plan.ts (what), go-wrapper-modules.ts (the go.mod files),
// go-build.ts (running go), build-cache.ts (where, and what is there), build-lock.ts.
import { join } from "node:path";
import { cacheRoot } from "../util/paths.js";
import { silentProgress, type Progress } from "../util/progress.js";
import {
  binariesFor,
  cachedSimBinaries,
  componentDir,
  isCached,
  type SimBinaries,
  type SimCacheOptions,
} from "./build-cache.js";
import { withBuildLock } from "./build-lock.js";
import { simBuildPlans } from "./build-plan.js";
import { buildComponent } from "./go-build.js";
import { findGoToolchain } from "./go-toolchain.js";
import { PINNED_SIM_VERSIONS } from "./versions.js";

// Names other files import from here, kept here since they moved next door.
export { cachedSimBinaries, simBuildStatus, type SimBinaries } from "./build-cache.js";
export {
  etcdWrapperGoMod,
  kubernetesWrapperGoMod,
  kwokWrapperGoMod,
  stagingModulesFromGoMod,
} from "./go-wrapper-modules.js";

export interface BuildSimOptions extends SimCacheOptions {
  /** Default: $REKINDLE_GO or go on PATH. */
  goBinary?: string;
  progress?: Progress;
  signal?: AbortSignal;
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
    for (const plan of simBuildPlans(versions)) {
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
