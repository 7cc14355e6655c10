// Cancellation for client-node calls: its generated APIs take no AbortSignal, but each request's
// context carries one that its fetch honours; a middleware sets it.
import { k8s } from "./client.js";

/** Per-call options that abort the request when `signal` does (the call rejects with an AbortError). */
export function abortOptions(signal: AbortSignal): k8s.ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(signal);
          return new k8s.Observable(Promise.resolve(context));
        },
        post: (context) => new k8s.Observable(Promise.resolve(context)),
      },
    ],
    middlewareMergeStrategy: "append",
  };
}
