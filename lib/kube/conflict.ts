// Read-modify-write with optimistic concurrency: the node lifecycle controller, KWOK and kubelets
// write the same objects, so a write from a stale read (409 Conflict) is read and tried again.
import { pollUntil } from "../util/time.js";
import { isConflict } from "./client.js";

export async function retryOnConflict<T>(what: string, attempt: () => Promise<T>): Promise<T> {
  const result = await pollUntil(
    async () => {
      try {
        return { value: await attempt() };
      } catch (error) {
        if (isConflict(error)) return undefined;
        throw error;
      }
    },
    { what, timeoutMs: 30_000, intervalMs: 100 },
  );
  return result.value;
}
