// The per-version build cache: <cache>/sim/<component>-<version>/{bin/,manifest.json}. A component
// counts as cached once its manifest is written, the last step of its build.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cacheRoot } from "../util/paths.js";
import { simBuildPlans, type ComponentName, type ComponentPlan } from "./build-plan.js";
import { PINNED_SIM_VERSIONS, type SimVersions } from "./versions.js";

export interface SimBinaries {
  kubectl: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  etcd: string;
  kwok: string;
  versions: SimVersions;
}

export interface SimCacheOptions {
  /** Default: PINNED_SIM_VERSIONS. */
  versions?: SimVersions;
  /** Default: cacheRoot() ($REKINDLE_CACHE_DIR or ~/.cache/rekindle). */
  cacheDir?: string;
}

export interface BuildManifest {
  component: ComponentName;
  version: string;
  goVersion: string;
  builtAt: string;
  buildSeconds: number;
  binaries: Record<string, { sha256: string }>;
}

export function componentDir(
  cacheDir: string,
  component: ComponentName,
  version: string,
  group = "sim",
): string {
  return join(cacheDir, group, `${component}-${version}`);
}

function readManifest(dir: string): BuildManifest | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as BuildManifest;
  } catch {
    return undefined;
  }
}

export function writeManifest(dir: string, manifest: BuildManifest): void {
  writeFileSync(join(dir, "manifest.json"), JSON.stringify(manifest, null, 2));
}

export function isCached(dir: string, plan: ComponentPlan): boolean {
  const manifest = readManifest(dir);
  return manifest !== undefined && plan.binaries.every((b) => existsSync(join(dir, "bin", b)));
}

export function binariesFor(cacheDir: string, versions: SimVersions): SimBinaries {
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
export function cachedSimBinaries(options: SimCacheOptions = {}): SimBinaries | undefined {
  const versions = options.versions ?? PINNED_SIM_VERSIONS;
  const cacheDir = options.cacheDir ?? cacheRoot();
  const allCached = simBuildPlans(versions).every((p) =>
    isCached(componentDir(cacheDir, p.component, p.version), p),
  );
  return allCached ? binariesFor(cacheDir, versions) : undefined;
}

/** Status of each component for `rekindle sim build --check` and error messages. */
export function simBuildStatus(
  options: SimCacheOptions = {},
): { component: string; version: string; dir: string; cached: boolean }[] {
  const versions = options.versions ?? PINNED_SIM_VERSIONS;
  const cacheDir = options.cacheDir ?? cacheRoot();
  return simBuildPlans(versions).map((p) => {
    const dir = componentDir(cacheDir, p.component, p.version);
    return { component: p.component, version: p.version, dir, cached: isCached(dir, p) };
  });
}
