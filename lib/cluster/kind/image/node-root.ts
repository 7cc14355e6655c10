// The node's root directory, before it becomes an image: the Debian rootfs, kind's base files for
// the pinned kind version (from its Go module), the Kubernetes node binaries, rekindle's manifests,
// and the setup kind's own base image does (systemd units enabled, containerd's base OCI spec).
import {
  chmodSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../../../errors.js";
import { runCommand } from "../../../util/command.js";
import type { GoToolchain } from "../../../build/go-toolchain.js";
import type { NodeImageBinaries } from "./go-parts.js";
import { imageRefs, NODE_IMAGE_PARTS, type NodeImageVersions } from "./recipe.js";

/** The directory of sigs.k8s.io/kind@version in the module cache (downloaded when missing). */
export async function kindModuleDir(go: GoToolchain, version: string, signal?: AbortSignal): Promise<string> {
  const info = await runCommand(go.command, ["mod", "download", "-json", `sigs.k8s.io/kind@${version}`], {
    env: { ...process.env, GOFLAGS: "-mod=mod", GOTOOLCHAIN: "local" },
    ...(signal ? { signal } : {}),
  });
  const dir = (JSON.parse(info.stdout) as { Dir?: string }).Dir;
  if (dir === undefined) {
    throw new RekindleError(
      "BUILD_FAILED",
      `go mod download gave no directory for sigs.k8s.io/kind@${version}`,
    );
  }
  return dir;
}

/**
 * kind's containerd config, changed in two places. restrict_oom_score_adj: pod sandboxes get
 * oom_score_adj -998, which sandboxes without CAP_SYS_RESOURCE refuse (kind turns this on only
 * when rootless). sandbox_image: the pause tag kubeadm of this Kubernetes version names.
 */
export function nodeContainerdConfig(kindConfig: string, pauseRef: string): string {
  const patched = kindConfig
    .replace(/restrict_oom_score_adj = false/, "restrict_oom_score_adj = true")
    .replace(/sandbox_image = "[^"]*"/, `sandbox_image = "${pauseRef}"`);
  if (!patched.includes("restrict_oom_score_adj = true") || !patched.includes(pauseRef)) {
    throw new RekindleError(
      "BUILD_FAILED",
      "kind's containerd config no longer has restrict_oom_score_adj or sandbox_image",
      {
        hint: "the pinned kind version changed its base files; update lib/cluster/kind/image/node-root.ts",
      },
    );
  }
  return patched;
}

/** What kind's base image Dockerfile runs after installing packages (our own words for it). */
const SETUP_SCRIPT = `set -e
for plugin in /usr/lib/cni/*; do ln -sf "$plugin" /opt/cni/bin/; done
rm -f /lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service
rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \\
  /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \\
  /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >> /etc/systemd/journald.conf
ln -sf /usr/lib/systemd/systemd /sbin/init
systemctl enable kubelet.service containerd.service undo-mount-hacks.service >/dev/null
systemctl mask systemd-binfmt.service >/dev/null
mkdir -p /etc/kubernetes/manifests
ctr oci spec > /tmp/oci-spec.json
`;

function copyInto(from: string, to: string, mode: number): void {
  mkdirSync(join(to, ".."), { recursive: true });
  cpSync(from, to, { recursive: true, dereference: true });
  chmodSync(to, mode);
}

/** Copies every file of `fromDir` into `toDir` with `mode`. */
function copyFiles(fromDir: string, toDir: string, mode: number): void {
  mkdirSync(toDir, { recursive: true });
  for (const entry of readdirSync(fromDir, { withFileTypes: true })) {
    if (entry.isFile()) copyInto(join(fromDir, entry.name), join(toDir, entry.name), mode);
  }
}

/** Fills `root` (an empty directory) with the node's filesystem. Needs root (tar, chroot). */
export async function prepareNodeRoot(options: {
  root: string;
  rootfsTar: string;
  kindModule: string;
  binaries: NodeImageBinaries;
  versions: NodeImageVersions;
  signal?: AbortSignal;
}): Promise<void> {
  const { root, binaries } = options;
  const signal = options.signal ? { signal: options.signal } : {};
  await runCommand("tar", ["-C", root, "-xf", options.rootfsTar], signal);
  const base = join(options.kindModule, "images", "base", "files");
  copyFiles(join(base, "usr", "local", "bin"), join(root, "usr", "local", "bin"), 0o755);
  copyFiles(join(base, "kind", "bin"), join(root, "kind", "bin"), 0o755);
  copyInto(join(base, "etc", "crictl.yaml"), join(root, "etc", "crictl.yaml"), 0o644);
  copyFiles(join(base, "etc", "default"), join(root, "etc", "default"), 0o644);
  copyFiles(join(base, "etc", "sysctl.d"), join(root, "etc", "sysctl.d"), 0o644);
  copyFiles(join(base, "etc", "systemd", "system"), join(root, "etc", "systemd", "system"), 0o644);
  copyFiles(
    join(base, "etc", "systemd", "system", "kubelet.service.d"),
    join(root, "etc", "systemd", "system", "kubelet.service.d"),
    0o644,
  );
  const refs = imageRefs(options.versions);
  writeFileSync(
    join(root, "etc", "containerd", "config.toml"),
    nodeContainerdConfig(readFileSync(join(base, "etc", "containerd", "config.toml"), "utf8"), refs.pause),
  );
  for (const binary of ["kubelet", "kubeadm", "kubectl"]) {
    const path = binaries[binary];
    if (path === undefined) throw new RekindleError("BUILD_FAILED", `no ${binary} binary was built`);
    copyInto(path, join(root, "usr", "bin", binary), 0o755);
  }
  // kind's units start /usr/local/bin/containerd; Debian installs it in /usr/bin.
  rmSync(join(root, "usr", "local", "bin", "containerd"), { force: true });
  symlinkSync("/usr/bin/containerd", join(root, "usr", "local", "bin", "containerd"));
  mkdirSync(join(root, "opt", "cni", "bin"), { recursive: true });
  writeFileSync(join(root, "kind", "version"), `${options.versions.kubernetes}\n`);
  copyFiles(join(NODE_IMAGE_PARTS, "manifests"), join(root, "kind", "manifests"), 0o644);

  writeFileSync(join(root, "tmp", "rekindle-setup.sh"), SETUP_SCRIPT);
  await runCommand("chroot", [root, "/bin/sh", "/tmp/rekindle-setup.sh"], signal);
  // containerd's base spec for CRI containers: kind's createContainer hook, no rlimits.
  const spec = JSON.parse(readFileSync(join(root, "tmp", "oci-spec.json"), "utf8")) as {
    process?: { rlimits?: unknown };
    hooks?: { createContainer?: { path: string }[] };
  };
  delete spec.process?.rlimits;
  spec.hooks = {
    ...spec.hooks,
    createContainer: [...(spec.hooks?.createContainer ?? []), { path: "/kind/bin/mount-product-files.sh" }],
  };
  writeFileSync(join(root, "etc", "containerd", "cri-base.json"), JSON.stringify(spec, null, 2));
  rmSync(join(root, "tmp", "rekindle-setup.sh"));
  rmSync(join(root, "tmp", "oci-spec.json"));
}
