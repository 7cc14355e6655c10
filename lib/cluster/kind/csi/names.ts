// The names of kind's attaching CSI driver (notes/csi-attach.md), apart from its install so that
// code reading a cluster (existing/storage.ts) need not load the build.

/** The CSIDriver's name (deploy/csi/main.go's DriverName). */
export const CSI_DRIVER = "shared.csi.rekindle.dev";
/** The StorageClass deploy/csi/deploy.yaml makes the cluster's default. */
export const CSI_STORAGE_CLASS = "rekindle-csi";
export const CSI_NAMESPACE = "rekindle-csi";
