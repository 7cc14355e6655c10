// A small Prometheus registry (counters and gauges with labels) and its text exposition on /metrics,
// served with /healthz, which answers the controller's own health (200 or 503).
import { createServer, type Server } from "node:http";
import { errorMessage, RekindleError } from "../errors.js";

type Labels = Record<string, string>;

interface Family {
  help: string;
  type: "counter" | "gauge";
  values: Map<string, { labels: Labels; value: number }>;
}

function key(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

export class MetricsRegistry {
  readonly #families = new Map<string, Family>();

  #family(name: string, help: string, type: Family["type"]): Family {
    let family = this.#families.get(name);
    if (!family) {
      family = { help, type, values: new Map() };
      this.#families.set(name, family);
    }
    return family;
  }

  inc(name: string, help: string, labels: Labels = {}, by = 1): void {
    const family = this.#family(name, help, "counter");
    const entry = family.values.get(key(labels)) ?? { labels, value: 0 };
    entry.value += by;
    family.values.set(key(labels), entry);
  }

  set(name: string, help: string, value: number, labels: Labels = {}): void {
    this.#family(name, help, "gauge").values.set(key(labels), { labels, value });
  }

  get(name: string, labels: Labels = {}): number {
    return this.#families.get(name)?.values.get(key(labels))?.value ?? 0;
  }

  exposition(): string {
    const lines: string[] = [];
    for (const [name, family] of this.#families) {
      lines.push(`# HELP ${name} ${family.help}`, `# TYPE ${name} ${family.type}`);
      for (const { labels, value } of family.values.values()) {
        const text = Object.entries(labels)
          .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
          .join(",");
        lines.push(`${name}${text ? `{${text}}` : ""} ${value}`);
      }
    }
    return `${lines.join("\n")}\n`;
  }

  /**
   * Serves /metrics and /healthz on `options.host` and `options.port` (0 picks a free one). Resolves
   * once listening; rejects, listening on nothing, when the port cannot be bound.
   */
  async serve(options: ServeOptions): Promise<{ server: Server; port: number }> {
    const host = options.host ?? "127.0.0.1";
    const health = options.health ?? (() => ({ ok: true, message: "ok" }));
    const server = createServer((req, res) => {
      if (req.url?.startsWith("/metrics")) {
        res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
        res.end(this.exposition());
      } else if (req.url?.startsWith("/healthz")) {
        let state: HealthState;
        try {
          state = health();
        } catch (error) {
          state = { ok: false, message: `health check failed: ${errorMessage(error)}` };
        }
        res.writeHead(state.ok ? 200 : 503, { "content-type": "text/plain; charset=utf-8" });
        res.end(`${state.ok ? "ok" : "unhealthy"}: ${state.message}\n`);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve, reject) => {
      const failed = (error: NodeJS.ErrnoException) => {
        server.close();
        reject(
          new RekindleError(
            error.code === "EADDRINUSE" ? "CONFLICT" : "COMMAND_FAILED",
            `cannot serve metrics on ${host}:${options.port}: ${error.code ?? error.message}`,
            {
              cause: error,
              ...(error.code === "EADDRINUSE"
                ? { hint: "pick another --metrics-port, or 0 for any free one" }
                : {}),
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
}

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

export const METRICS = {
  fences: ["rekindle_fences_total", "Fence attempts by result (success, failure, aborted)."],
  timeToFence: [
    "rekindle_time_to_fence_seconds",
    "Seconds from detection to a confirmed fence, last fence per node.",
  ],
  timeToRecover: [
    "rekindle_time_to_recover_seconds",
    "Seconds from detection to the node's workloads released (cleanup done), last per node.",
  ],
  unhealthy: ["rekindle_unhealthy_nodes", "Nodes currently judged unhealthy."],
  guardHolds: ["rekindle_guard_holds_total", "Fences the guard refused, by reason."],
} as const;
