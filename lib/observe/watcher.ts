// A list+watch loop for one resource that survives watch expiry: after a 410 Gone (or any broken
// watch) it relists and reports what changed during the gap, so no transition is lost, only
// observed late (those are marked source "relist").
import { k8s } from "../kube/client.js";
import { toError } from "../errors.js";
import { isAborted, sleep } from "../util/time.js";

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";

export interface ResourceWatcherOptions {
  /** e.g. "v1", "storage.k8s.io/v1" */
  apiVersion: string;
  kind: string;
  /** Limit to one namespace; default all namespaces. */
  namespace?: string;
  /** Collection path for watch, e.g. /api/v1/pods or /api/v1/namespaces/x/pods. */
  path: string;
  /** `previous` is the last version seen of the same object (undefined when new). */
  onChange: (
    type: ChangeType,
    object: k8s.KubernetesObject,
    previous: k8s.KubernetesObject | undefined,
    source: "watch" | "relist",
  ) => void;
  onError?: (error: unknown) => void;
  signal: AbortSignal;
}

/**
 * Drops metadata.managedFields, which no transition reads: the last version of every object is
 * kept (a Node's field managers are most of its size, times every node of a large cluster).
 */
function withoutManagedFields(object: k8s.KubernetesObject): void {
  if (object.metadata?.managedFields !== undefined) delete object.metadata.managedFields;
}

interface WatchEnd {
  expired: boolean;
}

export class ResourceWatcher {
  readonly #kc: k8s.KubeConfig;
  readonly #options: ResourceWatcherOptions;
  readonly #known = new Map<string, k8s.KubernetesObject>();
  #resourceVersion = "";
  /** How many times the watch was re-established after a relist (watch expiry or errors). */
  relists = 0;
  /** Resolves once the first list has been reported. */
  readonly listed: Promise<void>;
  /** Whether the first list has been reported (a change reported while false is part of it). */
  hasListed = false;
  #markListed!: () => void;
  #connection: AbortController | undefined;
  #interrupted = false;
  #forceRelist = false;
  #hold: Promise<void> | undefined;

  constructor(kc: k8s.KubeConfig, options: ResourceWatcherOptions) {
    this.#kc = kc;
    this.#options = options;
    this.listed = new Promise<void>((resolve) => {
      this.#markListed = resolve;
    });
  }

  /** Lists once (reporting every object as ADDED), then watches until the signal aborts. */
  async run(): Promise<void> {
    const { signal } = this.#options;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.#relist();
          needList = false;
          this.hasListed = true;
          this.#markListed();
        }
        if (this.#hold) {
          await Promise.race([
            this.#hold,
            new Promise((resolve) => {
              signal.addEventListener("abort", resolve, { once: true });
            }),
          ]);
          if (isAborted(signal)) break;
          if (this.#forceRelist) {
            this.#forceRelist = false;
            needList = true;
            this.relists++;
            continue;
          }
        }
        const end = await this.#watchOnce();
        if (end.expired) {
          needList = true;
          this.relists++;
        }
      } catch (error) {
        if (isAborted(signal)) break;
        this.#options.onError?.(error);
        needList = true;
        this.relists++;
        try {
          await sleep(1_000, signal);
        } catch {
          break;
        }
      }
    }
  }

  /**
   * Drops the live watch and stays disconnected until the returned function is called, as a long
   * network gap would. With `expire`, it then takes the path a 410 Gone answer takes (relist and
   * report the difference) instead of resuming from its resourceVersion. Used by tests: a young
   * apiserver's watch cache still serves old resourceVersions, so a real 410 is hard to provoke.
   */
  interrupt(options: { expire: boolean }): () => void {
    let release!: () => void;
    this.#hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#interrupted = true;
    this.#connection?.abort();
    return () => {
      this.#forceRelist = options.expire;
      this.#hold = undefined;
      release();
    };
  }

  async #relist(): Promise<void> {
    const client = k8s.KubernetesObjectApi.makeApiClient(this.#kc);
    const list = await client.list(this.#options.apiVersion, this.#options.kind, this.#options.namespace);
    const firstList = this.#resourceVersion === "";
    this.#resourceVersion = list.metadata?.resourceVersion ?? "";
    const seen = new Set<string>();
    for (const object of list.items) {
      withoutManagedFields(object);
      const uid = object.metadata?.uid ?? "";
      seen.add(uid);
      const previous = this.#known.get(uid);
      this.#known.set(uid, object);
      if (!previous) this.#options.onChange("ADDED", object, undefined, firstList ? "watch" : "relist");
      else if (previous.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
        this.#options.onChange("MODIFIED", object, previous, "relist");
      }
    }
    for (const [uid, object] of this.#known) {
      if (!seen.has(uid)) {
        this.#known.delete(uid);
        this.#options.onChange("DELETED", object, object, "relist");
      }
    }
  }

  #watchOnce(): Promise<WatchEnd> {
    const { signal } = this.#options;
    return new Promise<WatchEnd>((resolve, reject) => {
      let expired = false;
      let controller: AbortController | undefined;
      this.#interrupted = false;
      const onAbort = () => controller?.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      const watch = new k8s.Watch(this.#kc);
      watch
        .watch(
          this.#options.path,
          { resourceVersion: this.#resourceVersion, allowWatchBookmarks: true },
          (type: string, object: k8s.KubernetesObject & { code?: number }) => {
            if (type === "ERROR") {
              // 410 Gone: our resourceVersion is too old; relist.
              expired = true;
              return;
            }
            const rv = object.metadata?.resourceVersion;
            if (rv) this.#resourceVersion = rv;
            if (type === "BOOKMARK") return;
            withoutManagedFields(object);
            const uid = object.metadata?.uid ?? "";
            const previous = this.#known.get(uid);
            if (type === "DELETED") this.#known.delete(uid);
            else this.#known.set(uid, object);
            this.#options.onChange(type as ChangeType, object, previous, "watch");
          },
          (error: unknown) => {
            signal.removeEventListener("abort", onAbort);
            if (error && !signal.aborted && !expired && !this.#interrupted) {
              const status =
                (error as { statusCode?: number; code?: number }).statusCode ??
                (error as { code?: number }).code;
              if (status === 410) resolve({ expired: true });
              else reject(toError(error));
              return;
            }
            resolve({ expired });
          },
        )
        .then((c) => {
          controller = c;
          this.#connection = c;
          if (signal.aborted) c.abort();
        })
        .catch((error: unknown) => {
          signal.removeEventListener("abort", onAbort);
          reject(toError(error));
        });
    });
  }
}
