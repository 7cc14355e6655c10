// The sim's kubelets' volume managers, for what KWOK does not do (run in the sim-csi process):
// - every live node writes status.volumesInUse (the CSI volumes of its pods that have not ended)
//   at its node-status cadence, each node at its own phase, as a kubelet's status write does; a
//   stopped or partitioned node's last report stays, as a dead kubelet's does;
// - a node whose kubelet reports at every status write (reportsHeartbeat) also refreshes its Ready
//   condition's lastHeartbeatTime there, as a kubelet whose nodeStatusReportFrequency equals its
//   update cadence does: the node lifecycle controller counts that heartbeat as a sign of life
//   like a Lease renewal, so a lost node goes Unknown a grace period after the later of the two;
// - a pending pod with PVC volumes on a live node is marked mountable (VOLUMES_ATTACHED_ANNOTATION,
//   which KWOK's pod Stage waits for) at the reconciler's first look (every 100 ms) that finds
//   every claim bound and every attachable volume both reported in use by the node and attached to
//   it. kubelet-volume-timing.ts has what a real kubelet was measured doing.
// Watch caches, not LISTs on an interval: at 1000 nodes and 20 000 pods the earlier LIST of every
// pod every 2 s kept this process at 0.42 cores at rest (bench/results/controller-1000w-loaded-*),
// and kube-apiserver serving it.
import { isNotFound, k8s } from "../../../kube/client.js";
import { claimNames, VOLUMES_ATTACHED_ANNOTATION } from "../../../kube/csi-provisioner.js";
import { WatchCache, objectKey, type ChangeType } from "../../../controller/watch-cache.js";
import { apiWatchSource } from "../../../controller/watch-source.js";
import { errorMessage } from "../../../errors.js";
import { nextStatusWriteMs, VOLUME_RECONCILER_LOOP_MS } from "../../kubelet-volume-timing.js";
import { csiUniqueVolumeName, volumesInUseOnNode, type VolumeLookup } from "./volumes-in-use.js";

export interface SimKubeletVolumesOptions {
  kc: k8s.KubeConfig;
  /** The CSI driver whose volumes attach (VolumeAttachments of this attacher). */
  driver: string;
  /** The kubelets' node-status cadence (nodeStatusUpdateFrequency). */
  statusIntervalMs: number;
  /** Whether the node's kubelet runs now (its kwok runs and is not frozen). */
  isLive: (node: string) => boolean;
  /**
   * Whether the node's kubelet reports its status at every write, unchanged or not, refreshing its
   * Ready condition's heartbeat (a kubelet whose nodeStatusUpdateFrequency is set explicitly, as
   * kind-config.yaml's is, reports at that cadence). Default: none do (the upstream default reports
   * an unchanged status every 5 minutes, which the sim leaves out).
   */
  reportsHeartbeat?: (node: string) => boolean;
  log?: (message: string) => void;
  /** Wall clock, ms (test seam). Default Date.now. */
  now?: () => number;
}

/** A LIST of the caches is abandoned after this long (then retried). */
const LIST_TIMEOUT_MS = 60_000;

/** What a node's status says now (as this process wrote it, or read it first), sorted. */
type NodeReport = readonly string[];

export class SimKubeletVolumes {
  readonly #options: SimKubeletVolumesOptions;
  readonly #now: () => number;
  readonly #pods: WatchCache<k8s.V1Pod>;
  readonly #claims: WatchCache<k8s.V1PersistentVolumeClaim>;
  readonly #volumes: WatchCache<k8s.V1PersistentVolume>;
  readonly #attachments: WatchCache<k8s.V1VolumeAttachment>;
  /** A claim's volume and a volume's CSI source, read from the caches as they are. */
  readonly #lookup: VolumeLookup = {
    volumeOfClaim: (namespace, claim) => this.#claims.get(claim, namespace)?.spec?.volumeName,
    csiOfVolume: (volume) => this.#volumes.get(volume)?.spec?.csi,
  };
  /** Pod keys by the node they are bound to. */
  readonly #podsByNode = new Map<string, Set<string>>();
  /** Pods bound, pending and not marked, with PVC volumes: the ones a kubelet would be mounting for. */
  readonly #mounting = new Set<string>();
  /** Pods whose mark is being written. */
  readonly #marking = new Set<string>();
  readonly #reports = new Map<string, NodeReport>();
  /**
   * Nodes whose kubelet has made a status write since it last ran: only then does its report count
   * for a mount (a returning kubelet marks volumes reported by its own writes, not by a report an
   * earlier run of it left on the node).
   */
  readonly #wroteSinceStart = new Set<string>();
  readonly #statusTimers = new Map<string, NodeJS.Timeout>();
  #reconciler: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: SimKubeletVolumesOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    const cache = <T extends { metadata?: k8s.V1ObjectMeta }>(
      path: string,
      what: string,
      onChange?: (type: ChangeType, object: T, previous: T | undefined) => void,
    ) =>
      new WatchCache<T>({
        source: apiWatchSource<T>(options.kc, path, {}, what, LIST_TIMEOUT_MS),
        now: () => performance.now(),
        staleAfterMs: 120_000,
        reopenQuietMs: 60_000,
        ...(onChange ? { onChange } : {}),
        ...(options.log ? { log: options.log } : {}),
      });
    this.#pods = cache<k8s.V1Pod>("/api/v1/pods", "pods", (type, pod, previous) => {
      this.#podChanged(type, pod, previous);
    });
    this.#claims = cache("/api/v1/persistentvolumeclaims", "PersistentVolumeClaims");
    this.#volumes = cache("/api/v1/persistentvolumes", "PersistentVolumes");
    this.#attachments = cache("/apis/storage.k8s.io/v1/volumeattachments", "VolumeAttachments");
  }

  /** Lists and watches; resolves once every cache has listed (retrying until it has). */
  async start(): Promise<void> {
    const caches = [this.#claims, this.#volumes, this.#attachments, this.#pods];
    for (const c of caches) c.start();
    for (const c of caches) {
      for (;;) {
        try {
          await c.whenSynced(LIST_TIMEOUT_MS);
          break;
        } catch (error) {
          if (this.#stopped) return;
          this.#log(`${c.what} not listed yet (retrying): ${errorMessage(error)}`);
        }
      }
    }
    this.#reconciler = setInterval(() => {
      this.#reconcile();
    }, VOLUME_RECONCILER_LOOP_MS);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#reconciler);
    for (const timer of this.#statusTimers.values()) clearTimeout(timer);
    this.#statusTimers.clear();
    await Promise.all([this.#pods, this.#claims, this.#volumes, this.#attachments].map((c) => c.stop()));
  }

  #log(message: string): void {
    this.#options.log?.(message);
  }

  #podChanged(type: ChangeType, pod: k8s.V1Pod, previous: k8s.V1Pod | undefined): void {
    const key = objectKey(pod);
    const before = previous?.spec?.nodeName;
    const now = type === "DELETED" ? undefined : pod.spec?.nodeName;
    if (before !== undefined && before !== now) this.#podsByNode.get(before)?.delete(key);
    if (now !== undefined) {
      let set = this.#podsByNode.get(now);
      if (!set) {
        set = new Set();
        this.#podsByNode.set(now, set);
        this.#scheduleStatusWrite(now);
      }
      set.add(key);
    }
    if (now !== undefined && needsMount(pod)) this.#mounting.add(key);
    else this.#mounting.delete(key);
  }

  /** The reconciler's look: marks every waiting pod on a live node whose volumes are ready there. */
  #reconcile(): void {
    for (const key of this.#mounting) {
      if (this.#marking.has(key)) continue;
      const pod = this.#pods.get(...nameAndNamespace(key));
      const node = pod?.spec?.nodeName;
      if (!pod || node === undefined || !needsMount(pod)) continue;
      // A kubelet that does not run mounts nothing.
      if (!this.#options.isLive(node) || !this.#mountable(pod, node)) continue;
      this.#marking.add(key);
      void this.#markMountable(pod, node).finally(() => {
        this.#marking.delete(key);
      });
    }
  }

  /** Every claim bound; every volume of this driver reported in use by the node and attached to it. */
  #mountable(pod: k8s.V1Pod, node: string): boolean {
    const namespace = pod.metadata?.namespace ?? "";
    const reported = this.#reports.get(node);
    return claimNames(pod).every((claim) => {
      const volumeName = this.#lookup.volumeOfClaim(namespace, claim) ?? "";
      if (volumeName === "") return false;
      const csi = this.#lookup.csiOfVolume(volumeName);
      if (csi?.driver !== this.#options.driver) return true;
      const unique = csiUniqueVolumeName(csi.driver, csi.volumeHandle);
      return (
        this.#wroteSinceStart.has(node) &&
        reported?.includes(unique) === true &&
        this.#attached(volumeName, node)
      );
    });
  }

  #attached(volumeName: string, node: string): boolean {
    for (const va of this.#attachments.values()) {
      if (
        va.spec.attacher === this.#options.driver &&
        va.spec.source.persistentVolumeName === volumeName &&
        va.spec.nodeName === node &&
        va.status?.attached === true &&
        !va.metadata?.deletionTimestamp
      ) {
        return true;
      }
    }
    return false;
  }

  async #markMountable(pod: k8s.V1Pod, node: string): Promise<void> {
    const core = this.#options.kc.makeApiClient(k8s.CoreV1Api);
    const name = pod.metadata?.name ?? "";
    const namespace = pod.metadata?.namespace ?? "";
    try {
      await core.patchNamespacedPod(
        { name, namespace, body: { metadata: { annotations: { [VOLUMES_ATTACHED_ANNOTATION]: "true" } } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      this.#log(`volumes of ${namespace}/${name} mountable on ${node}`);
    } catch (error) {
      if (isNotFound(error)) return;
      // The pod still waits: the reconciler's next look tries again.
      this.#log(`marking ${namespace}/${name} failed (trying again): ${errorMessage(error)}`);
    }
  }

  #scheduleStatusWrite(node: string): void {
    if (this.#stopped) return;
    const now = this.#now();
    const at = nextStatusWriteMs(node, now, this.#options.statusIntervalMs);
    const timer = setTimeout(() => {
      void this.#writeStatus(node).finally(() => {
        this.#scheduleStatusWrite(node);
      });
    }, at - now);
    timer.unref();
    this.#statusTimers.set(node, timer);
  }

  /**
   * One status write of `node`'s kubelet: its volumesInUse if the list changed, and its Ready
   * heartbeat if it reports at every write; nothing when it does not run.
   */
  async #writeStatus(node: string): Promise<void> {
    if (this.#stopped) return;
    if (!this.#options.isLive(node)) {
      // Its last report stays; what is on the node is read again when it runs. A node in a
      // graceful shutdown still runs (shutdown.ts): its writes go on until the power-off.
      this.#reports.delete(node);
      this.#wroteSinceStart.delete(node);
      return;
    }
    const core = this.#options.kc.makeApiClient(k8s.CoreV1Api);
    try {
      let report = this.#reports.get(node);
      if (!report) {
        // This process's first write for the node: what an earlier one left there.
        const current = (await core.readNodeStatus({ name: node })).status?.volumesInUse ?? [];
        report = [...current].sort();
        this.#reports.set(node, report);
      }
      const volumes = this.#inUse(node);
      const changed = !sameList(report, volumes);
      const heartbeat = this.#options.reportsHeartbeat?.(node) === true;
      if (changed || heartbeat) {
        // Strategic merge: conditions merge by type, so only Ready's heartbeat moves.
        const status: StatusPatch = {
          ...(changed ? { volumesInUse: volumes } : {}),
          ...(heartbeat ? { conditions: [readyHeartbeat(new Date(this.#now()))] } : {}),
        };
        await core.patchNodeStatus(
          { name: node, body: { status } },
          k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.StrategicMergePatch),
        );
      }
      this.#reports.set(node, volumes);
      this.#wroteSinceStart.add(node);
      if (changed) this.#log(`node ${node}: volumesInUse [${volumes.join(", ")}]`);
    } catch (error) {
      if (!isNotFound(error)) this.#log(`node ${node}: status not written: ${errorMessage(error)}`);
    }
  }

  /** The CSI volumes of the node's pods that have not ended, sorted (as the kubelet sorts them). */
  #inUse(node: string): string[] {
    const pods = [...(this.#podsByNode.get(node) ?? [])].flatMap(
      (key) => this.#pods.get(...nameAndNamespace(key)) ?? [],
    );
    return volumesInUseOnNode(node, pods, this.#lookup);
  }
}

/** A pod its kubelet would be mounting PVC volumes for: bound, pending, not deleting, not marked. */
function needsMount(pod: k8s.V1Pod): boolean {
  return (
    pod.status?.phase === "Pending" &&
    !pod.metadata?.deletionTimestamp &&
    pod.metadata?.annotations?.[VOLUMES_ATTACHED_ANNOTATION] !== "true" &&
    claimNames(pod).length > 0
  );
}

/** A node status patch of the fields a kubelet's status write moves here. */
interface StatusPatch {
  volumesInUse?: string[];
  conditions?: { type: string; lastHeartbeatTime: string }[];
}

/**
 * Ready's heartbeat alone, merged by type into the node's own Ready condition (which kwok wrote
 * when it made the node Ready; a status write only comes for a node with pods bound, after that).
 */
function readyHeartbeat(at: Date): { type: string; lastHeartbeatTime: string } {
  return { type: "Ready", lastHeartbeatTime: at.toISOString() };
}

function nameAndNamespace(key: string): [string, string] {
  const slash = key.indexOf("/");
  return [key.slice(slash + 1), key.slice(0, slash)];
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
