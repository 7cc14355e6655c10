// The StorageClasses a rekindle-created kind cluster offers the suites, apart from their install
// so that flag checks need not load it.
import { CSI_STORAGE_CLASS } from "./csi/names.js";

/** hostPath volumes on a directory shared into every node (shared-storage.ts): nothing to attach. */
export const SHARED_STORAGE_CLASS = "rekindle-shared";

/** `rekindle run --provider kind --storage-class`: the first is the default (notes/csi-attach.md). */
export const KIND_STORAGE_CLASSES = [CSI_STORAGE_CLASS, SHARED_STORAGE_CLASS] as const;
