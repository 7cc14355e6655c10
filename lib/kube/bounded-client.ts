// API calls with a deadline: a KubeConfig whose API clients end every request (its response body
// included) after a timeout, or as soon as a signal aborts. client-node's generated APIs take no
// AbortSignal and have no timeout of their own; a request to an API server that stopped answering
// would otherwise wait for the operating system's TCP timeout, minutes later.
import { RekindleError } from "../errors.js";
import { k8s } from "./client.js";
import type { SharedAgents } from "./shared-agents.js";

export interface RequestBounds {
  /** How long a request started now may take (ms), read once per request. */
  timeoutMs: () => number;
  /** Aborts every request in flight when it aborts (read once per request). */
  signal: () => AbortSignal;
}

/**
 * `kc` with every API client it makes bounded by `bounds`: each request gets its own timer, and a
 * signal a call sets itself (lib/kube/abort.ts) still applies. Everything else is `kc`'s own (the
 * object is a view of it, not a copy), so credentials refreshed there apply here too. With `agents`,
 * requests reuse their connections (shared-agents.ts; its owner destroys it when done).
 */
export function boundedKubeConfig(
  kc: k8s.KubeConfig,
  bounds: RequestBounds,
  agents?: SharedAgents,
): k8s.KubeConfig {
  const httpApi = boundedHttp(new k8s.IsomorphicFetchHttpLibrary(), bounds, agents);
  const makeApiClient = <T extends k8s.ApiType>(apiClientType: k8s.ApiConstructor<T>): T => {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new RekindleError("INVALID_INPUT", "the kubeconfig has no current cluster");
    return new apiClientType(
      k8s.createConfiguration({
        baseServer: new k8s.ServerConfiguration(cluster.server, {}),
        authMethods: { default: kc },
        httpApi,
      }),
    );
  };
  return new Proxy(kc, {
    get(target, property) {
      if (property === "makeApiClient") return makeApiClient;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Sends through `inner` with a per-request signal that aborts at the timeout or with bounds.signal. */
function boundedHttp(
  inner: k8s.HttpLibrary,
  bounds: RequestBounds,
  agents: SharedAgents | undefined,
): k8s.HttpLibrary {
  return k8s.wrapHttpLibrary({
    async send(request: k8s.RequestContext): Promise<k8s.ResponseContext> {
      const agent = agents?.shared(request.getAgent());
      if (agent) request.setAgent(agent);
      const own = request.getSignal();
      const parent = own ? AbortSignal.any([own, bounds.signal()]) : bounds.signal();
      const bound = requestSignal(
        parent,
        bounds.timeoutMs(),
        `${request.getHttpMethod()} ${request.getUrl()}`,
      );
      request.setSignal(bound.signal);
      // An aborted fetch only says "The operation was aborted": say why instead.
      const why = (error: unknown): unknown => (bound.signal.aborted ? bound.signal.reason : error);
      try {
        const response = await inner.send(request).toPromise();
        // The body is read after this returns: the bound lasts until it is.
        const read = async <T>(body: () => Promise<T>): Promise<T> => {
          try {
            return await body();
          } catch (error) {
            throw why(error);
          } finally {
            bound.dispose();
          }
        };
        const body: k8s.ResponseBody = {
          text: () => read(() => response.body.text()),
          binary: () => read(() => response.body.binary()),
        };
        return new k8s.ResponseContext(response.httpStatusCode, response.headers, body);
      } catch (error) {
        bound.dispose();
        throw why(error);
      }
    },
  });
}

/**
 * A signal that aborts with `parent` or after `timeoutMs`. Its timer and its listener on `parent`
 * go at dispose() or when the timer fires, whichever is first: a request whose body is never read
 * leaves nothing behind for longer than its timeout. The timer does not keep the process alive.
 */
function requestSignal(
  parent: AbortSignal,
  timeoutMs: number,
  what: string,
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onParentAbort = () => {
    dispose();
    controller.abort(parent.reason);
  };
  const timer = setTimeout(
    () => {
      dispose();
      controller.abort(new RekindleError("TIMEOUT", `${what} abandoned after ${timeoutMs} ms`));
    },
    Math.max(1, timeoutMs),
  );
  timer.unref();
  function dispose(): void {
    clearTimeout(timer);
    parent.removeEventListener("abort", onParentAbort);
  }
  if (parent.aborted) onParentAbort();
  else parent.addEventListener("abort", onParentAbort, { once: true });
  return { signal: controller.signal, dispose };
}
