// The wrapper Go modules that let `go build` fetch each component from the module proxy at a
// pinned version: a go.mod requiring the component, with the `replace` lines its own go.mod
// resolves with relative paths (which only work in its repository) pinned to the same tag.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../errors.js";
import { runCommand } from "../util/command.js";
import type { GoToolchain } from "./go-toolchain.js";
import { stagingVersionFor } from "./versions.js";

// kubectl is not needed by the harness; it is built so `sim up` users and tests have a matching one.
export const KUBE_COMMANDS = ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"];

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
export function kubernetesWrapperGoMod(
  version: string,
  stagingModules: readonly string[],
  commands: readonly string[] = KUBE_COMMANDS,
): string {
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
    ...commands.map((c) => `\tk8s.io/kubernetes/cmd/${c}`),
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

/** Writes the Kubernetes wrapper: its staging module list is read from the tag's own go.mod. */
export async function writeKubernetesWrapper(
  go: GoToolchain,
  workDir: string,
  version: string,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
  commands: readonly string[] = KUBE_COMMANDS,
): Promise<void> {
  const info = await runCommand(go.command, ["mod", "download", "-json", `k8s.io/kubernetes@${version}`], {
    env,
    signal,
    cwd: workDir,
  });
  const goModPath = (JSON.parse(info.stdout) as { GoMod?: string }).GoMod;
  if (!goModPath)
    throw new RekindleError(
      "BUILD_FAILED",
      `go mod download gave no go.mod for k8s.io/kubernetes@${version}`,
    );
  const staging = stagingModulesFromGoMod(readFileSync(goModPath, "utf8"));
  if (staging.length === 0) {
    throw new RekindleError(
      "BUILD_FAILED",
      `found no staging modules in k8s.io/kubernetes@${version}'s go.mod`,
    );
  }
  writeFileSync(join(workDir, "go.mod"), kubernetesWrapperGoMod(version, staging, commands));
}
