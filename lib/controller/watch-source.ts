// A WatchSource (watch-cache.ts) on the API: a LIST bounded by a timeout, then WATCHes with
// bookmarks, each ended by the server after WATCH_TIMEOUT_SECONDS (the cache reopens it, which
// spreads load over API servers). Used by the controller's caches and by the sim's kubelet parts.
import type { k8s } from "../kube/client.js";
import { listJson, openWatch } from "../kube/watch-stream.js";
import { boundedSignal } from "../util/abort.js";
import type { WatchSource } from "./watch-cache.js";

/** The server ends each WATCH after this long. */
const WATCH_TIMEOUT_SECONDS = 300;

export interface ApiWatchOptions<T> {
  /** Read each WATCH at most once per this many ms (watch-lines.ts). Default: events as they arrive. */
  batchMs?: number;
  /**
   * What of each object is kept (listed or received), e.g. the few fields a cache is read for: the
   * rest is garbage at once instead of living in the cache. Default: all of it.
   */
  project?: (object: T) => T;
}

/**
 * Watches `path` (e.g. "/api/v1/pods") with `query` (label or field selectors); `what` names the
 * objects in messages. Each LIST is abandoned after `listTimeoutMs`.
 */
export function apiWatchSource<T>(
  kc: k8s.KubeConfig,
  path: string,
  query: Record<string, string>,
  what: string,
  listTimeoutMs: number,
  options: ApiWatchOptions<T> = {},
): WatchSource<T> {
  const project = options.project ?? ((object: T) => object);
  return {
    what,
    list: async (stop) => {
      const bound = boundedSignal(stop, listTimeoutMs, `LIST ${what}`);
      try {
        const list = await listJson(kc, path, query, bound.signal);
        return { items: (list.items as T[]).map(project), resourceVersion: list.resourceVersion };
      } finally {
        bound.dispose();
      }
    },
    watch: (resourceVersion, signal, onEvent) =>
      openWatch(
        kc,
        path,
        {
          ...query,
          resourceVersion,
          allowWatchBookmarks: "true",
          timeoutSeconds: String(WATCH_TIMEOUT_SECONDS),
        },
        signal,
        (line) => {
          // An ERROR event's object is a Status, not a T: handed over whole.
          onEvent(line.type, line.type === "ERROR" ? (line.object as T) : project(line.object as T));
        },
        options.batchMs === undefined ? {} : { batchMs: options.batchMs },
      ),
  };
}
