// A WatchSource (watch-cache.ts) on the API: a LIST bounded by a timeout, then WATCHes with
// bookmarks, each ended by the server after WATCH_TIMEOUT_SECONDS (the cache reopens it, which
// spreads load over API servers). Used by the controller's caches and by the sim's kubelet parts.
import type { k8s } from "../kube/client.js";
import { listJson, openWatch } from "../kube/watch-stream.js";
import { boundedSignal } from "../util/abort.js";
import type { WatchSource } from "./watch-cache.js";

/** The server ends each WATCH after this long. */
const WATCH_TIMEOUT_SECONDS = 300;

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
): WatchSource<T> {
  return {
    what,
    list: async (stop) => {
      const bound = boundedSignal(stop, listTimeoutMs, `LIST ${what}`);
      try {
        const list = await listJson(kc, path, query, bound.signal);
        return { items: list.items as T[], resourceVersion: list.resourceVersion };
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
          onEvent(line.type, line.object as T);
        },
      ),
  };
}
