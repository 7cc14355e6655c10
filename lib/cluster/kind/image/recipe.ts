// What rekindle's offline kind node image is made of: pinned versions, the Debian packages of its
// two root filesystems, and the exact image references kubeadm and the manifests expect. A change
// to any of it changes the recipe hash, hence the image tag and the cache entries.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../../util/project-files.js";
import { PINNED_SIM_VERSIONS } from "../../../build/versions.js";
import { PINNED_KIND_VERSION } from "../cli.js";

export interface NodeImageVersions {
  /** Kubernetes tag (the sim's: one version across providers). */
  kubernetes: string;
  /** sigs.k8s.io/kind tag whose images/base/files the image carries. */
  kind: string;
  /** Versions kubeadm v1.34 names in `kubeadm config images list`. */
  coredns: string;
  etcd: string;
  /** etcd image tag as kubeadm writes it (version plus kubeadm's "-0" revision). */
  etcdImageTag: string;
  pauseImageTag: string;
  localPathProvisioner: string;
  /** Debian suite of both root filesystems. */
  debian: string;
}

export const NODE_IMAGE_VERSIONS: Readonly<NodeImageVersions> = {
  kubernetes: PINNED_SIM_VERSIONS.kubernetes,
  kind: PINNED_KIND_VERSION,
  coredns: "v1.12.1",
  etcd: "v3.6.5",
  etcdImageTag: "3.6.5-0",
  pauseImageTag: "3.10.1",
  localPathProvisioner: "v0.0.30",
  debian: "bookworm",
};

/**
 * The node's root filesystem: systemd as PID 1, containerd and runc, what the kubelet and
 * kube-proxy call (iptables, conntrack, mount, ...), D-Bus and logind (the kubelet's graceful
 * node shutdown needs an inhibitor lock), jq (kind's mount hook), the CNI plugins.
 */
export const NODE_PACKAGES: readonly string[] = [
  "systemd",
  "systemd-sysv",
  "dbus",
  "libpam-systemd",
  "containerd",
  "runc",
  "iptables",
  "nftables",
  "conntrack",
  "ebtables",
  "iproute2",
  "ethtool",
  "socat",
  "util-linux",
  "mount",
  "kmod",
  "e2fsprogs",
  "libseccomp2",
  "procps",
  "ca-certificates",
  "containernetworking-plugins",
  "jq",
  "pigz",
  "bash",
  "coreutils",
  "findutils",
];

/** The userland image (kube-proxy, the pod network, the storage provisioner and its helper pods). */
export const USERLAND_PACKAGES: readonly string[] = [
  "iptables",
  "nftables",
  "conntrack",
  "iproute2",
  "kmod",
  "procps",
];

/** Image references: kubeadm's exactly as `kubeadm config images list` prints them. */
export function imageRefs(v: NodeImageVersions = NODE_IMAGE_VERSIONS) {
  return {
    apiserver: `registry.k8s.io/kube-apiserver:${v.kubernetes}`,
    controllerManager: `registry.k8s.io/kube-controller-manager:${v.kubernetes}`,
    scheduler: `registry.k8s.io/kube-scheduler:${v.kubernetes}`,
    proxy: `registry.k8s.io/kube-proxy:${v.kubernetes}`,
    coredns: `registry.k8s.io/coredns/coredns:${v.coredns}`,
    pause: `registry.k8s.io/pause:${v.pauseImageTag}`,
    etcd: `registry.k8s.io/etcd:${v.etcdImageTag}`,
    /** Named in deploy/kind/manifests (pod network, storage helper pods). */
    userland: `docker.io/rekindle/kind-userland:${v.debian}`,
    localPath: `docker.io/rekindle/local-path-provisioner:${v.localPathProvisioner}`,
  } as const;
}

/** Project files baked into the image: a change to one is a new image. */
export const NODE_IMAGE_PARTS = join(PROJECT_ROOT, "deploy", "kind");

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Bumped when the assembly steps change in a way the inputs above do not show. */
const ASSEMBLY_REVISION = 2;

/**
 * 10 hex digits over everything that goes into the image. The parts count by their path inside
 * `parts` and their content, not by where the checkout keeps them: moving the folder is no new image.
 */
export function recipeHash(
  v: NodeImageVersions = NODE_IMAGE_VERSIONS,
  parts: string = NODE_IMAGE_PARTS,
): string {
  const hash = createHash("sha256");
  hash.update(JSON.stringify({ v, NODE_PACKAGES, USERLAND_PACKAGES, ASSEMBLY_REVISION }));
  for (const file of filesUnder(parts)) {
    hash.update(file.slice(parts.length));
    hash.update(readFileSync(file));
  }
  return hash.digest("hex").slice(0, 10);
}

/** rekindle/node:v1.34.4-<recipe hash>: the tag says the Kubernetes version and the recipe. */
export function nodeImageTag(v: NodeImageVersions = NODE_IMAGE_VERSIONS): string {
  return `rekindle/node:${v.kubernetes}-${recipeHash(v)}`;
}
