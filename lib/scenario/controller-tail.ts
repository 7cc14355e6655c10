// A scenario that waits in vain for a controller milestone (an event, a taint) fails with the
// controller's last log lines in its message: they say what it decided instead (held, waited for
// peers, found something to release), which a report read later cannot otherwise show.
import { RekindleError } from "../errors.js";

/** How many of the in-process controllers' lines a timeout carries. */
export const CONTROLLER_TAIL_LINES = 8;

/** `error`, with `tail` appended to its message when it is a timeout and there is a tail. */
export function withControllerTail(error: unknown, tail: readonly string[]): unknown {
  if (!(error instanceof RekindleError) || error.code !== "TIMEOUT" || tail.length === 0) return error;
  return new RekindleError(
    "TIMEOUT",
    `${error.message}; the recovery controller's last lines:\n${tail.map((l) => `  ${l}`).join("\n")}`,
    {
      details: { ...error.details, controllerTail: tail },
      cause: error,
      ...(error.hint ? { hint: error.hint } : {}),
    },
  );
}
