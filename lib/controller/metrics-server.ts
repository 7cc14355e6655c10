// The controller's HTTP endpoint: /metrics (a prom-client registry's text exposition) and /healthz,
// which answers the controller's own health (200 or 503).
import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";
import { errorMessage, RekindleError } from "../errors.js";

/** What /healthz answers: 200 when ok, else 503; the message is the body. */
export interface HealthState {
  ok: boolean;
  message: string;
}

export interface ServeOptions {
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Address to listen on. Default "127.0.0.1" (in a pod, "0.0.0.0" so the kubelet's probes reach it). */
  host?: string;
  /** Asked on every /healthz request. Default: always ok. */
  health?: () => HealthState;
}

function healthOf(health: () => HealthState): HealthState {
  try {
    return health();
  } catch (error) {
    return { ok: false, message: `health check failed: ${errorMessage(error)}` };
  }
}

/**
 * Serves /metrics and /healthz on `options.host` and `options.port`. Resolves once listening with
 * the port bound; rejects, listening on nothing, when the address cannot be bound.
 */
export async function serveMetrics(
  registry: Registry,
  options: ServeOptions,
): Promise<{ server: Server; port: number }> {
  const host = options.host ?? "127.0.0.1";
  const health = options.health ?? (() => ({ ok: true, message: "ok" }));
  const server = createServer((req, res) => {
    if (req.url?.startsWith("/metrics")) {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { "content-type": registry.contentType }).end(text);
        },
        (error: unknown) => {
          res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`${errorMessage(error)}\n`);
        },
      );
    } else if (req.url?.startsWith("/healthz")) {
      const state = healthOf(health);
      res.writeHead(state.ok ? 200 : 503, { "content-type": "text/plain; charset=utf-8" });
      res.end(`${state.ok ? "ok" : "unhealthy"}: ${state.message}\n`);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      server.close();
      const inUse = error.code === "EADDRINUSE";
      reject(
        new RekindleError(
          inUse ? "CONFLICT" : "COMMAND_FAILED",
          `cannot serve metrics on ${host}:${options.port}: ${error.code ?? error.message}`,
          {
            cause: error,
            hint: inUse
              ? "pick another --metrics-bind-address port (or --metrics-port), or 0 for any free one"
              : "--metrics-bind-address must name an address of this machine (127.0.0.1, 0.0.0.0, or one of its own)",
          },
        ),
      );
    };
    server.once("error", failed);
    server.listen(options.port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
  const address = server.address();
  return { server, port: typeof address === "object" && address ? address.port : options.port };
}
