// What every sim boot step works on: the session, the validated options, the credentials once
// written and the waits to join at the end. A leaf, so the step lists (boot.ts, workers.ts,
// filler.ts) import it without importing each other.
import type { ValidatedSimOptions } from "./options.js";
import type { SimTokens } from "./pki.js";
import type { SimSession } from "./session.js";

export interface SimBootContext {
  readonly session: SimSession;
  readonly options: ValidatedSimOptions;
  readonly signal: AbortSignal | undefined;
  /** Set by the credentials step; the apiserver's readiness probe authenticates with the admin token. */
  tokens?: SimTokens;
  /** Waits started by one step and joined by the last, so they overlap the steps between. */
  readonly background: Promise<unknown>[];
}
