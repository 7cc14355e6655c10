// Free loopback TCP ports, chosen at run time so two clusters can run side by side.
import { createServer, type Server } from "node:net";

/**
 * Reserves `count` distinct free ports on 127.0.0.1 by holding listeners open until all are
 * known, then releases them. A port can still be taken between release and use; callers that
 * bind them retry the whole start on "address already in use".
 */
export async function freeLoopbackPorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      const port = await new Promise<number>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, "127.0.0.1", () => {
          const address = server.address();
          if (address === null || typeof address === "string") reject(new Error("no port assigned"));
          else resolve(address.port);
        });
      });
      ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => {
              resolve();
            });
          }),
      ),
    );
  }
}
