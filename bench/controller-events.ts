// The controller's node Events as this bench receives them, each timed on arrival (wall clock):
// the moment a decision became visible outside the controller. A watch cache (the controller's own
// kind, lib/controller/watch-cache.ts) on Events in the node-event namespace from the controller.
import { EVENT_SOURCE, NODE_EVENT_NAMESPACE } from "../lib/controller/events.js";
import { WatchCache, type WatchSource } from "../lib/controller/watch-cache.js";
import type { k8s } from "../lib/kube/client.js";
import { listJson, openWatch } from "../lib/kube/watch-stream.js";
import type { ReceivedEvent } from "./decisions.js";

const PATH = `/api/v1/namespaces/${NODE_EVENT_NAMESPACE}/events`;
const QUERY = { fieldSelector: `source=${EVENT_SOURCE}` };

export class ControllerEvents implements AsyncDisposable {
  readonly received: ReceivedEvent[] = [];
  readonly #cache: WatchCache<k8s.CoreV1Event>;

  constructor(kc: k8s.KubeConfig) {
    const source: WatchSource<k8s.CoreV1Event> = {
      what: "controller Events",
      list: async (signal) => {
        const list = await listJson(kc, PATH, QUERY, signal);
        return { items: list.items as k8s.CoreV1Event[], resourceVersion: list.resourceVersion };
      },
      watch: (resourceVersion, signal, onEvent) =>
        openWatch(kc, PATH, { ...QUERY, resourceVersion, allowWatchBookmarks: "true" }, signal, (line) => {
          onEvent(line.type, line.object as k8s.CoreV1Event);
        }),
    };
    this.#cache = new WatchCache({
      source,
      now: Date.now,
      staleAfterMs: 60_000,
      reopenQuietMs: 30_000,
      onChange: (type, event, _previous, atMs) => {
        if (type !== "ADDED" || event.involvedObject.kind !== "Node") return;
        this.received.push({
          node: event.involvedObject.name ?? "",
          reason: event.reason ?? "",
          message: event.message ?? "",
          receivedAtMs: atMs,
        });
      },
    });
  }

  /** Starts watching; resolves once the first LIST is in (Events from then on are timed as they come). */
  async start(timeoutMs = 30_000): Promise<void> {
    this.#cache.start();
    await this.#cache.whenSynced(timeoutMs);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#cache.stop();
  }
}
