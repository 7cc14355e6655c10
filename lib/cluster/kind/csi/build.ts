// The Go parts of kind's attaching CSI driver (notes/csi-attach.md), built like the node image's
// (wrapper module, go build, cached per version under <cache>/kind/): upstream's external-attacher
// from its module, and our plugin from deploy/csi, whose version is a hash of its sources.
import { copyFileSync, writeFileSync } from "node:fs";
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

/** github.com/kubernetes-csi/external-attacher/v4 tag (the proxy serves it; it declares go 1.26.0). */
export const EXTERNAL_ATTACHER_VERSION = "v4.13.0";
const ATTACHER_MODULE = "github.com/kubernetes-csi/external-attacher/v4";
const ATTACHER_PACKAGE = `${ATTACHER_MODULE}/cmd/csi-attacher`;

/** Our plugin's Go module (deploy/csi). */
export const CSI_PLUGIN_SOURCES = deployPath("csi");

/** "src-" + 10 hex digits over the plugin's sources: a changed source is a new cache entry. */
export function pluginVersion(dir: string = CSI_PLUGIN_SOURCES): string {
  return moduleSourceVersion(dir);
}

export function attacherWrapperGoMod(version: string = EXTERNAL_ATTACHER_VERSION): string {
  return [
    "module rekindle.local/csi-attacher-build",
    "",
    "go 1.26.0",
    "",
    `require ${ATTACHER_MODULE} ${version}`,
    "",
    `tool ${ATTACHER_PACKAGE}`,
    "",
  ].join("\n");
}

export function csiBuildPlans(sources: string = CSI_PLUGIN_SOURCES): ComponentPlan[] {
  return [
    {
      component: "csi-attacher",
      version: EXTERNAL_ATTACHER_VERSION,
      cacheGroup: GROUP,
      packages: [ATTACHER_PACKAGE],
      binaries: ["csi-attacher"],
      // main.version is what the attacher logs at start.
      ldflags: `-s -w -X main.version=${EXTERNAL_ATTACHER_VERSION}`,
      prepare(_go, workDir) {
        writeFileSync(join(workDir, "go.mod"), attacherWrapperGoMod());
        return Promise.resolve();
      },
    },
    {
      component: "csi-shared",
      version: pluginVersion(sources),
      cacheGroup: GROUP,
      packages: ["rekindle.dev/csi-shared"],
      binaries: ["csi-shared"],
      ldflags: "-s -w",
      prepare(_go, workDir) {
        for (const file of moduleSourceFiles(sources)) copyFileSync(join(sources, file), join(workDir, file));
        return Promise.resolve();
      },
    },
  ];
}

export interface CsiBinaries {
  csiAttacher: string;
  csiShared: string;
  /** The versions they were built at (the image tag is made from them). */
  versions: { csiAttacher: string; csiShared: string };
}

/** Builds what is not cached yet: the attacher takes about 3 minutes cold on 2 cores, the plugin seconds. */
export async function ensureCsiBinaries(options: {
  cacheDir?: string;
  sources?: string;
  progress: Progress;
  signal?: AbortSignal;
}): Promise<CsiBinaries> {
  const cacheDir = options.cacheDir ?? cacheRoot();
  const plans = csiBuildPlans(options.sources);
  const dirOf = (plan: ComponentPlan) => componentDir(cacheDir, plan.component, plan.version, GROUP);
  const pending = plans.filter((p) => !isCached(dirOf(p), p));
  if (pending.length > 0) {
    const go = await findGoToolchain({});
    await withBuildLock(cacheDir, options.progress, options.signal, async () => {
      for (const plan of pending) {
        if (isCached(dirOf(plan), plan)) continue;
        await buildComponent(plan, go, cacheDir, options.progress, options.signal);
      }
    });
  }
  const [attacher, plugin] = plans as [ComponentPlan, ComponentPlan];
  return {
    csiAttacher: join(dirOf(attacher), "bin", "csi-attacher"),
    csiShared: join(dirOf(plugin), "bin", "csi-shared"),
    versions: { csiAttacher: attacher.version, csiShared: plugin.version },
  };
}
