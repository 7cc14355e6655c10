// Waiting in a test for a synchronous condition (pollUntil takes an async check returning a value).
import { pollUntil } from "../../lib/util/time.js";

/** Resolves once `condition()` holds, polling every `intervalMs`; times out naming `what`. */
export async function until(
  condition: () => boolean,
  what: string,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  await pollUntil(() => Promise.resolve(condition() ? true : undefined), {
    what,
    timeoutMs: options.timeoutMs ?? 3_000,
    intervalMs: options.intervalMs ?? 2,
  });
}
