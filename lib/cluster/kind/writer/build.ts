// The writer workload's binary (deploy/workloads/writer, notes in docs/scenario-files.md): our Go
// module, standard library only, built static like the CSI plugin and cached under <cache>/kind/ at
// a hash of its sources.
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { componentDir, isCached } from "../../../build/build-cache.js";
import { withBuildLock } from "../../../build/build-lock.js";
import type { ComponentPlan } from "../../../build/build-plan.js";
import { buildComponent } from "../../../build/go-build.js";
import { findGoToolchain } from "../../../build/go-toolchain.js";
import { moduleSourceFiles, moduleSourceVersion } from "../../../build/source-version.js";
import { deployPath } from "../../../util/project-files.js";
import { cacheRoot } from "../../../util/paths.js";
import type { Progress } from "../../../util/progress.js";

const GROUP = "kind";

/** The writer's Go module. */
export const WRITER_SOURCES = deployPath("workloads", "writer");

export function writerBuildPlan(sources: string = WRITER_SOURCES): ComponentPlan {
  return {
    component: "writer",
    version: moduleSourceVersion(sources),
    cacheGroup: GROUP,
    packages: ["rekindle.dev/writer"],
    binaries: ["writer"],
    ldflags: "-s -w",
    prepare(_go, workDir) {
      for (const file of moduleSourceFiles(sources)) copyFileSync(join(sources, file), join(workDir, file));
      return Promise.resolve();
    },
  };
}

export interface WriterBinary {
  path: string;
  /** The version it was built at ("src-<hash>"): the image tag. */
  version: string;
}

/** Builds the writer unless cached (seconds: the standard library only). */
export async function ensureWriterBinary(options: {
  /** Default cacheRoot(). */
  cacheDir?: string;
  /** Default WRITER_SOURCES. */
  sources?: string;
  progress: Progress;
  signal?: AbortSignal;
}): Promise<WriterBinary> {
  const cacheDir = options.cacheDir ?? cacheRoot();
  const plan = writerBuildPlan(options.sources);
  const dir = componentDir(cacheDir, plan.component, plan.version, GROUP);
  if (!isCached(dir, plan)) {
    const go = await findGoToolchain({});
    await withBuildLock(cacheDir, options.progress, options.signal, async () => {
      if (!isCached(dir, plan)) await buildComponent(plan, go, cacheDir, options.progress, options.signal);
    });
  }
  return { path: join(dir, "bin", "writer"), version: plan.version };
}
