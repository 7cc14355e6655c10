// What the sim build makes: per component, its version, main packages, binaries, link flags and
// how its wrapper module is written.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GoToolchain } from "./go-toolchain.js";
import {
  etcdWrapperGoMod,
  KUBE_COMMANDS,
  kwokWrapperGoMod,
  writeKubernetesWrapper,
} from "./go-wrapper-modules.js";
import type { SimVersions } from "./versions.js";

/** The sim's components, the offline kind node image's, then kind's CSI driver's and the writer workload's (built the same way). */
export type ComponentName =
  | "kubernetes"
  | "etcd"
  | "kwok"
  | "kubernetes-node"
  | "coredns"
  | "local-path-provisioner"
  | "pause"
  | "csi-attacher"
  | "csi-shared"
  | "writer";

export interface ComponentPlan {
  component: ComponentName;
  version: string;
  /** Cache subdirectory: <cache>/<group>/<component>-<version>. Default "sim". */
  cacheGroup?: string;
  /** Main packages to build; each yields a binary named after its last path element. */
  packages: string[];
  binaries: string[];
  /** Writes go.mod for the wrapper module into `workDir`. */
  prepare: (go: GoToolchain, workDir: string, env: NodeJS.ProcessEnv, signal?: AbortSignal) => Promise<void>;
  ldflags: string;
}

/** Stamps the version Kubernetes binaries report (`kubectl version`, /version), as its release build does. */
export function kubeLdflags(version: string): string {
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

export function simBuildPlans(versions: SimVersions): ComponentPlan[] {
  return [
    {
      component: "kubernetes",
      version: versions.kubernetes,
      packages: KUBE_COMMANDS.map((c) => `k8s.io/kubernetes/cmd/${c}`),
      binaries: KUBE_COMMANDS,
      ldflags: kubeLdflags(versions.kubernetes),
      prepare: (go, workDir, env, signal) =>
        writeKubernetesWrapper(go, workDir, versions.kubernetes, env, signal),
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
