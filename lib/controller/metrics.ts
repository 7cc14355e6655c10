// A small Prometheus registry (counters and gauges with labels) and its text exposition on /metrics.
import { createServer, type Server } from "node:http";

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

  /** Serves /metrics on 127.0.0.1 (or `host`); port 0 picks a free one. */
  async serve(port: number, host = "127.0.0.1"): Promise<{ server: Server; port: number }> {
    const server = createServer((req, res) => {
      if (req.url?.startsWith("/metrics")) {
        res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
        res.end(this.exposition());
      } else if (req.url?.startsWith("/healthz")) {
        res.writeHead(200).end("ok");
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    const address = server.address();
    return { server, port: typeof address === "object" && address ? address.port : port };
  }
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
