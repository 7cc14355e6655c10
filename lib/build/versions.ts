// Pinned versions of everything the sim provider builds. Changing one means a new cache entry.

export interface SimVersions {
  /** k8s.io/kubernetes tag; the staging modules are replaced with the matching v0.x tag. */
  kubernetes: string;
  /** go.etcd.io/etcd/server/v3 tag. */
  etcd: string;
  /** sigs.k8s.io/kwok tag. */
  kwok: string;
}

export const PINNED_SIM_VERSIONS: Readonly<SimVersions> = {
  kubernetes: "v1.34.4",
  etcd: "v3.6.16",
  kwok: "v0.8.0",
};

/** Oldest Go that builds all three (etcd v3.6.16 and kwok v0.8.0 declare go 1.26.0). */
export const MINIMUM_GO_VERSION = "1.26.0";

/** v1.34.4 → v0.34.4: the tag of the staging modules released with a Kubernetes tag. */
export function stagingVersionFor(kubernetesVersion: string): string {
  const match = /^v1\.(\d+)\.(\d+)$/.exec(kubernetesVersion);
  if (!match) throw new Error(`not a Kubernetes release tag: ${kubernetesVersion}`);
  return `v0.${match[1]}.${match[2]}`;
}
