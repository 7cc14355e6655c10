// A signal that aborts when its parent does or after a timeout, whichever comes first. Not
// AbortSignal.any([parent, AbortSignal.timeout(ms)]): on Node 20 the timeout signal inside
// AbortSignal.any can be garbage-collected before it fires, so the composite never aborts (seen
// here: a hung fence driver call was never abandoned). This one holds its timer itself.
import { RekindleError } from "../errors.js";

export interface BoundedSignal {
  readonly signal: AbortSignal;
  /** Clears the timer and the parent listener (call when the bounded work is done). */
  dispose(): void;
}

export function boundedSignal(parent: AbortSignal, timeoutMs: number, what: string): BoundedSignal {
  const controller = new AbortController();
  const onParentAbort = () => {
    controller.abort(parent.reason);
  };
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener("abort", onParentAbort, { once: true });
  const timer = setTimeout(() => {
    controller.abort(new RekindleError("TIMEOUT", `${what} abandoned after ${timeoutMs} ms`));
  }, timeoutMs);
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      parent.removeEventListener("abort", onParentAbort);
    },
  };
}
