// The kind provider's storage: the rekindle-shared class always (hostPath volumes, nothing to
// attach: shared-storage.ts), and, by default, the attaching CSI driver (csi/, notes/csi-attach.md),
// which then becomes the class the suites' volumes use. Its provisioners run in this process.
import type { k8s } from "../../kube/client.js";
import type { Progress } from "../../util/progress.js";
import type { StorageSettings } from "../provider.js";
import type { KindCli } from "./cli.js";
import {
  awaitCsiRegistered,
  CSI_STORAGE_CLASS,
  installCsiDriver,
  startCsiProvisioner,
} from "./csi/install.js";
import { installSharedStorageClass, SHARED_STORAGE_CLASS, startSharedProvisioner } from "./shared-storage.js";

export interface KindStorageStart {
  kc: k8s.KubeConfig;
  /** Install the attaching CSI driver and make it the suites' class. Default false. */
  csi?: boolean;
  /** Needed with csi: the cluster to load the driver's image into, and its workers. */
  cli: KindCli;
  cluster: string;
  workers: () => Promise<string[]>;
  progress: Progress;
  signal?: AbortSignal;
}

export class KindStorage {
  #provisioners: { stop(): Promise<void> }[] = [];
  #csi = false;

  /** Where the suites' claims go: rekindle-csi (attached) once installed, else rekindle-shared. */
  get settings(): StorageSettings {
    return this.#csi
      ? { storageClass: CSI_STORAGE_CLASS, attachRequired: true }
      : { storageClass: SHARED_STORAGE_CLASS, attachRequired: false };
  }

  /** With the CSI driver: waits until `node`'s kubelet has registered it (again). Else at once. */
  async awaitNodeServing(kc: k8s.KubeConfig, node: string, signal?: AbortSignal): Promise<void> {
    if (!this.#csi) return;
    await awaitCsiRegistered(kc, [node], signal ? { signal } : {});
  }

  get started(): boolean {
    return this.#provisioners.length > 0;
  }

  async start(options: KindStorageStart): Promise<void> {
    if (this.started) return;
    const { kc, progress } = options;
    const log = (message: string) => {
      progress.info(`[storage] ${message}`);
    };
    await installSharedStorageClass(kc);
    this.#provisioners.push(startSharedProvisioner(kc, log));
    if (options.csi !== true) return;
    try {
      await installCsiDriver({
        kc,
        cli: options.cli,
        cluster: options.cluster,
        workers: await options.workers(),
        progress,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      // The caller deletes the cluster: no provisioner may go on polling it.
      await this.stop();
      throw error;
    }
    this.#provisioners.push(startCsiProvisioner(kc, log));
    this.#csi = true;
  }

  async stop(): Promise<void> {
    const provisioners = this.#provisioners;
    this.#provisioners = [];
    for (const p of provisioners) await p.stop();
  }
}
