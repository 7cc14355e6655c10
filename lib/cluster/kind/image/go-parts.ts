// The node image's Go programs, built like the sim's binaries (wrapper module, go build, cached
// per version under <cache>/kind/): the node binaries of Kubernetes, CoreDNS, the etcd kubeadm
// names, local-path-provisioner and rekindle's own pause.
import { copyFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cacheRoot } from "../../../util/paths.js";
import type { Progress } from "../../../util/progress.js";
import { componentDir, isCached } from "../../../build/build-cache.js";
import { withBuildLock } from "../../../build/build-lock.js";
import { kubeLdflags, type ComponentPlan } from "../../../build/build-plan.js";
import { buildComponent } from "../../../build/go-build.js";
import { findGoToolchain } from "../../../build/go-toolchain.js";
import { etcdWrapperGoMod, writeKubernetesWrapper } from "../../../build/go-wrapper-modules.js";
import { PINNED_SIM_VERSIONS } from "../../../build/versions.js";
import { NODE_IMAGE_PARTS, NODE_IMAGE_VERSIONS, type NodeImageVersions } from "./recipe.js";

const GROUP = "kind";
/** Kubernetes commands the node image needs beyond the sim's (apiserver, controller-manager, scheduler, kubectl). */
export const NODE_KUBE_COMMANDS = ["kubelet", "kubeadm", "kube-proxy"];

function moduleWrapper(name: string, module: string, version: string): string {
  return [
    `module rekindle.local/${name}-build`,
    "",
    "go 1.26.0",
    "",
    `require ${module} ${version}`,
    "",
    `tool ${module}`,
    "",
  ].join("\n");
}

function toolPlan(component: ComponentPlan["component"], module: string, version: string): ComponentPlan {
  return {
    component,
    version,
    cacheGroup: GROUP,
    packages: [module],
    binaries: [component],
    ldflags: "-s -w",
    prepare(_go, workDir) {
      writeFileSync(join(workDir, "go.mod"), moduleWrapper(component, module, version));
      return Promise.resolve();
    },
  };
}

export function nodeImageGoPlans(v: NodeImageVersions = NODE_IMAGE_VERSIONS): ComponentPlan[] {
  return [
    {
      component: "kubernetes-node",
      version: v.kubernetes,
      cacheGroup: GROUP,
      packages: NODE_KUBE_COMMANDS.map((c) => `k8s.io/kubernetes/cmd/${c}`),
      binaries: NODE_KUBE_COMMANDS,
      ldflags: kubeLdflags(v.kubernetes),
      prepare: (go, workDir, env, signal) =>
        writeKubernetesWrapper(go, workDir, v.kubernetes, env, signal, NODE_KUBE_COMMANDS),
    },
    {
      component: "etcd",
      version: v.etcd,
      cacheGroup: GROUP,
      packages: ["go.etcd.io/etcd/server/v3"],
      binaries: ["etcd"],
      ldflags: "-s -w",
      prepare(_go, workDir) {
        writeFileSync(join(workDir, "go.mod"), etcdWrapperGoMod(v.etcd));
        return Promise.resolve();
      },
    },
    toolPlan("coredns", "github.com/coredns/coredns", v.coredns),
    toolPlan("local-path-provisioner", "github.com/rancher/local-path-provisioner", v.localPathProvisioner),
    {
      // Our own module in deploy/kind/pause: copied into the work directory and built there.
      component: "pause",
      version: v.pauseImageTag,
      cacheGroup: GROUP,
      packages: ["rekindle.dev/pause"],
      binaries: ["pause"],
      ldflags: "-s -w",
      prepare(_go, workDir) {
        const source = join(NODE_IMAGE_PARTS, "pause");
        for (const file of readdirSync(source)) copyFileSync(join(source, file), join(workDir, file));
        return Promise.resolve();
      },
    },
  ];
}

/** Paths of every Go binary the image needs, by binary name. */
export type NodeImageBinaries = Record<string, string>;

/** Builds what is not cached yet (minutes cold; the Kubernetes build shares the sim's Go cache). */
export async function ensureNodeImageBinaries(options: {
  versions?: NodeImageVersions;
  cacheDir?: string;
  progress: Progress;
  signal?: AbortSignal;
}): Promise<NodeImageBinaries> {
  const versions = options.versions ?? NODE_IMAGE_VERSIONS;
  const cacheDir = options.cacheDir ?? cacheRoot();
  const plans = nodeImageGoPlans(versions);
  const binaries: NodeImageBinaries = {};
  const pending = plans.filter((p) => !isCached(componentDir(cacheDir, p.component, p.version, GROUP), p));
  if (pending.length > 0) {
    const go = await findGoToolchain({});
    await withBuildLock(cacheDir, options.progress, options.signal, async () => {
      for (const plan of pending) {
        if (isCached(componentDir(cacheDir, plan.component, plan.version, GROUP), plan)) continue;
        await buildComponent(plan, go, cacheDir, options.progress, options.signal);
      }
    });
  }
  for (const plan of plans) {
    const dir = componentDir(cacheDir, plan.component, plan.version, GROUP);
    for (const binary of plan.binaries) binaries[binary] = join(dir, "bin", binary);
  }
  // The control-plane binaries and kubectl are the sim's (same version, same cache).
  const simKube = join(componentDir(cacheDir, "kubernetes", PINNED_SIM_VERSIONS.kubernetes), "bin");
  for (const c of ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"]) {
    binaries[c] = join(simKube, c);
  }
  return binaries;
}
