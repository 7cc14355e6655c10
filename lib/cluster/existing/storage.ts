// Storage on a cluster rekindle did not create: which StorageClass the built-in scenarios' volume
// StatefulSet gets (--storage-class, else the cluster's default class), whether its volumes attach
// to a node (the class's CSIDriver says), and whether they can follow a pod to another node at all.
// A class that keeps each volume on one node cannot serve a scenario whose StatefulSet must move:
// named by the user, it is refused (exit 2); the cluster's default, the scenarios are skipped.
import { RekindleError } from "../../errors.js";
import { k8s } from "../../kube/client.js";
import { listStorageClasses, nodeLocalClassWhy, type StorageClassInfo } from "../../kube/storage-classes.js";
import { CSI_DRIVER } from "../kind/csi/names.js";
import { SHARED_PROVISIONER } from "../kind/shared-storage.js";
import type { StorageSettings } from "../provider.js";

/** Provisioners that run only inside a `rekindle run --provider kind` process. */
const PROCESS_PROVISIONED: ReadonlySet<string> = new Set([SHARED_PROVISIONER, CSI_DRIVER]);

/** What the choice is made from (read by readStorageFacts; a plain value for tests). */
export interface StorageFacts {
  classes: readonly StorageClassInfo[];
  /** CSIDriver objects by name: their spec.attachRequired (undefined: unset, which means true). */
  csiDrivers: ReadonlyMap<string, boolean | undefined>;
  /** Available (unclaimed) PersistentVolumes, counted by their storageClassName. */
  availableVolumes: ReadonlyMap<string, number>;
}

export interface ExistingStorage {
  /** The class the suites' claims name and whether it attaches; absent when the cluster has none to offer. */
  storage?: StorageSettings;
  /** Why the built-in volume StatefulSet could not follow its pod to another node; absent: it can. */
  volumesStayPut?: string;
  /** One line for the log: the class, how it was chosen, attach, or why it cannot serve. */
  summary: string;
}

/**
 * In-tree provisioners of disks that attach to one machine (migrated to CSI drivers whose
 * CSIDriver objects carry other names, so the class's own provisioner finds none).
 */
const IN_TREE_ATTACHED = [
  "kubernetes.io/aws-ebs",
  "kubernetes.io/gce-pd",
  "kubernetes.io/azure-disk",
  "kubernetes.io/cinder",
  "kubernetes.io/vsphere-volume",
];

/** Whether the class's volumes attach to a node, and on whose word. */
function attachOf(info: StorageClassInfo, facts: StorageFacts): { attach: boolean; why: string } {
  if (facts.csiDrivers.has(info.provisioner)) {
    const own = facts.csiDrivers.get(info.provisioner);
    return {
      attach: own ?? true,
      why: `CSIDriver ${info.provisioner} attachRequired ${own ?? "unset (true)"}`,
    };
  }
  if (IN_TREE_ATTACHED.includes(info.provisioner))
    return { attach: true, why: `${info.provisioner} attaches its disks` };
  return { attach: false, why: `no CSIDriver ${info.provisioner}: not CSI, nothing to attach` };
}

/** Why the class cannot serve a volume that must move, or undefined when it can. */
function cannotServe(info: StorageClassInfo, facts: StorageFacts): string | undefined {
  const local = nodeLocalClassWhy(info);
  if (local !== undefined) return `${local}, so a StatefulSet pod with a volume could never move`;
  // kind's shared classes (hostPath, and the attaching CSI driver's): their provisioner lives in a
  // `rekindle run --provider kind` process.
  if (PROCESS_PROVISIONED.has(info.provisioner) && (facts.availableVolumes.get(info.name) ?? 0) === 0)
    return `StorageClass ${info.name} is provisioned only inside a \`rekindle run --provider kind\` process (${info.provisioner}), which does not run for an existing cluster, and there is no Available PersistentVolume of the class: its claims would stay Pending`;
  return undefined;
}

const CHOOSE_HINT =
  'name a class whose volumes can follow a pod to another node with --storage-class (or mark one rekindle.dev/node-local: "false")';

/**
 * The storage for the suites' volume StatefulSet. `requested` (--storage-class) must exist and be
 * able to serve (else INVALID_INPUT, exit 2); without it the default class is taken, and when it
 * cannot serve, `volumesStayPut` says why (the scenarios that deploy the volume are skipped).
 */
export function chooseExistingStorage(facts: StorageFacts, requested?: string): ExistingStorage {
  const names = facts.classes.map((c) => `${c.name}${c.isDefault ? " (default)" : ""}`).join(", ") || "none";
  if (requested !== undefined) {
    const info = facts.classes.find((c) => c.name === requested);
    if (info === undefined)
      throw new RekindleError(
        "INVALID_INPUT",
        `--storage-class ${requested}: no such StorageClass in the cluster`,
        {
          hint: `its StorageClasses: ${names}`,
        },
      );
    const why = cannotServe(info, facts);
    if (why !== undefined)
      throw new RekindleError(
        "INVALID_INPUT",
        `--storage-class ${requested} cannot serve the scenarios' volume: ${why}`,
        {
          hint: `${CHOOSE_HINT}; the cluster's StorageClasses: ${names}`,
        },
      );
    return served(info, facts, "--storage-class");
  }
  const info = facts.classes.find((c) => c.isDefault);
  if (info === undefined) {
    const why = `the cluster has no default StorageClass (it has: ${names}); name one with --storage-class`;
    return { volumesStayPut: why, summary: `storage: ${why}` };
  }
  const why = cannotServe(info, facts);
  if (why === undefined) return served(info, facts, "the cluster's default");
  return {
    volumesStayPut: `${why} (the cluster's default class; ${CHOOSE_HINT})`,
    summary: `storage: the default StorageClass ${info.name} cannot serve a volume that must move: ${why}`,
  };
}

function served(info: StorageClassInfo, facts: StorageFacts, chosenBy: string): ExistingStorage {
  const { attach, why } = attachOf(info, facts);
  return {
    storage: { storageClass: info.name, attachRequired: attach },
    summary: `storage: StorageClass ${info.name} (${info.provisioner}, ${chosenBy}); volumes ${attach ? "attach" : "do not attach"} to a node (${why})`,
  };
}

/** The StorageClasses, CSIDrivers and Available PersistentVolumes (three LISTs). */
export async function readStorageFacts(kc: k8s.KubeConfig): Promise<StorageFacts> {
  const storageApi = kc.makeApiClient(k8s.StorageV1Api);
  const [classes, drivers, volumes] = await Promise.all([
    listStorageClasses(kc),
    storageApi.listCSIDriver(),
    kc.makeApiClient(k8s.CoreV1Api).listPersistentVolume(),
  ]);
  const available = new Map<string, number>();
  for (const pv of volumes.items) {
    const cls = pv.spec?.storageClassName ?? "";
    if (pv.status?.phase === "Available" && pv.spec?.claimRef === undefined)
      available.set(cls, (available.get(cls) ?? 0) + 1);
  }
  return {
    classes,
    csiDrivers: new Map(drivers.items.map((d) => [d.metadata?.name ?? "", d.spec.attachRequired])),
    availableVolumes: available,
  };
}
