// Wakes the agent's loop as soon as a request for any node changes: a watch on the request
// ConfigMaps, restarted whenever it ends. The loop still lists on its own every resync interval, so
// a watch that is down (the API server out of reach, this node partitioned) only slows it down.
import { errorMessage } from "../errors.js";
import { k8s } from "../kube/client.js";

/** How long a watch that ended (or failed to start) waits before the next. */
const RESTART_MS = 1_000;

export interface RequestWake {
  /** Resolves after `ms`, or sooner when a request changed since the last call. */
  next(ms: number): Promise<void>;
  stop(): void;
}

export function watchRequests(
  kc: k8s.KubeConfig,
  namespace: string,
  labelSelector: string,
  log: (line: string) => void,
): RequestWake {
  let stopped = false;
  let changed = false;
  let wake: (() => void) | undefined;
  let connection: AbortController | undefined;
  let restart: NodeJS.Timeout | undefined;
  const notify = () => {
    changed = true;
    wake?.();
  };
  const start = () => {
    if (stopped) return;
    const again = () => {
      connection = undefined;
      if (!stopped) restart = setTimeout(start, RESTART_MS);
    };
    new k8s.Watch(kc)
      .watch(`/api/v1/namespaces/${namespace}/configmaps`, { labelSelector }, notify, (error: unknown) => {
        if (error && !stopped) log(`request watch ended: ${errorMessage(error)}`);
        again();
      })
      .then((c) => {
        connection = c;
        if (stopped) c.abort();
      })
      .catch((error: unknown) => {
        log(`request watch not started: ${errorMessage(error)}`);
        again();
      });
  };
  start();
  return {
    next(ms) {
      if (changed || stopped) {
        changed = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          wake = undefined;
          changed = false;
          resolve();
        }
        wake = done;
      });
    },
    stop() {
      stopped = true;
      clearTimeout(restart);
      connection?.abort();
      wake?.();
    },
  };
}
