// Reading an incoming HTTP request's body with a size limit (the project's small HTTPS services).
import type { IncomingMessage } from "node:http";

/**
 * The whole body as UTF-8, or undefined when it is longer than `maxBytes`: the rest is read and
 * dropped, so the caller can still answer (413, 400) on the same connection.
 */
export function readBoundedBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.on("end", () => {
      resolve(size > maxBytes ? undefined : Buffer.concat(chunks).toString("utf8"));
    });
    req.on("error", reject);
  });
}
