// The controller's Prometheus metrics (prom-client, on a registry of its own): what it fenced and
// held, how long detection, fencing and recovery took, its errors by kind, whether it leads, which
// build it is, and optionally the process's own metrics (CPU, memory, event-loop lag). Per-node
// series are removed when their node leaves the cluster. Served by metrics-server.ts.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { rekindleVersion } from "../util/build-info.js";
import type { NodeHealth } from "./detect.js";
import { errorKind } from "./error-kind.js";
import type { FenceStatus } from "./fence-state.js";
import { serveMetrics, type ServeOptions } from "./metrics-server.js";

/** Metric names (docs/controller.md lists them; dashboards and tests depend on them). */
export const METRICS = {
  fences: "rekindle_fences_total",
  timeToFence: "rekindle_time_to_fence_seconds",
  timeToRecover: "rekindle_time_to_recover_seconds",
  unhealthy: "rekindle_unhealthy_nodes",
  guardHolds: "rekindle_guard_holds_total",
  detectDuration: "rekindle_detect_duration_seconds",
  fenceDuration: "rekindle_fence_duration_seconds",
  recoveryDuration: "rekindle_recovery_duration_seconds",
  buildInfo: "rekindle_build_info",
  leader: "rekindle_leader",
  apiErrors: "rekindle_api_errors_total",
  driverErrors: "rekindle_driver_errors_total",
} as const;

export type FenceResult = "success" | "failure" | "aborted";

export interface ControllerMetricsOptions {
  /**
   * Also collect prom-client's default process metrics (CPU, memory, handles, GC, event-loop lag).
   * Default false: the process may be a test runner hosting many controllers; `rekindle controller`
   * turns them on.
   */
  processMetrics?: boolean;
  /** The build_info labels. Default: package.json's version and this Node's version. */
  build?: { version: string; nodeVersion: string };
}

/** How often the process metrics sample event-loop lag (prom-client's default is 10 ms). */
export const LAG_SAMPLE_MS = 100;

const seconds = (ms: number): number => Math.max(0, ms) / 1000;

function parseTime(text: string | undefined): number | undefined {
  const ms = text === undefined ? Number.NaN : Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly #fences;
  readonly #timeToFence;
  readonly #timeToRecover;
  readonly #unhealthy;
  readonly #guardHolds;
  readonly #detect;
  readonly #fence;
  readonly #recovery;
  readonly #apiErrors;
  readonly #driverErrors;
  /** Whether this replica may act; read on every scrape. */
  #leading: () => boolean = () => true;
  /** Per lost node, when this controller judged it lost (its clock): the start of time to recover. */
  readonly #lostAt = new Map<string, number>();
  /** Nodes that have per-node series, to remove when they leave the cluster. */
  readonly #nodesWithSeries = new Set<string>();

  constructor(options: ControllerMetricsOptions = {}) {
    const registers = [this.registry];
    this.#fences = new Counter({
      name: METRICS.fences,
      help: "Fence attempts by result (success, failure, aborted).",
      labelNames: ["result"] as const,
      registers,
    });
    this.#timeToFence = new Gauge({
      name: METRICS.timeToFence,
      help: "Seconds from the fence's start to its confirmed power-off, last fence per node (removed with the node).",
      labelNames: ["node"] as const,
      registers,
    });
    this.#timeToRecover = new Gauge({
      name: METRICS.timeToRecover,
      help: "Seconds from the fence's start to the node's workloads released (cleanup done), last per node (removed with the node).",
      labelNames: ["node"] as const,
      registers,
    });
    this.#unhealthy = new Gauge({ name: METRICS.unhealthy, help: "Nodes currently judged lost.", registers });
    this.#guardHolds = new Counter({
      name: METRICS.guardHolds,
      help: "Fences the guard refused, by reason.",
      labelNames: ["reason"] as const,
      registers,
    });
    this.#detect = new Histogram({
      name: METRICS.detectDuration,
      help: "Seconds from the last sign of life this controller saw of a node to the pass that judged it lost.",
      buckets: [1, 2, 5, 10, 15, 20, 25, 30, 45, 60, 90, 120, 300, 600],
      registers,
    });
    this.#fence = new Histogram({
      name: METRICS.fenceDuration,
      help: "Seconds from a fence's start to its power-off confirmed.",
      buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800],
      registers,
    });
    this.#recovery = new Histogram({
      name: METRICS.recoveryDuration,
      help: "Seconds from a node judged lost to its workloads released (cleanup done); after a controller restart, from the fence's start.",
      buckets: [5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600, 1800],
      registers,
    });
    this.#apiErrors = new Counter({
      name: METRICS.apiErrors,
      help: "Failed Kubernetes API calls and reconcile steps, by kind (HTTP status class, timeout, network, other).",
      labelNames: ["kind"] as const,
      registers,
    });
    this.#driverErrors = new Counter({
      name: METRICS.driverErrors,
      help: "Failed fence driver calls, by driver and kind (timeout, aborted, network, other).",
      labelNames: ["driver", "kind"] as const,
      registers,
    });
    const build = options.build ?? { version: rekindleVersion(), nodeVersion: process.version };
    new Gauge({
      name: METRICS.buildInfo,
      help: "Always 1; the labels say which rekindle and which Node.js run the controller.",
      labelNames: ["version", "node_version"] as const,
      registers,
    }).set({ version: build.version, node_version: build.nodeVersion }, 1);
    const leading = () => this.#leading();
    new Gauge({
      name: METRICS.leader,
      help: "1 when this replica leads (or runs without leader election), 0 on a standby.",
      registers,
      collect() {
        this.set(leading() ? 1 : 0);
      },
    });
    // prom-client samples event-loop lag every 10 ms by default; that alone cost 0.3 % of a core
    // in an idle process here (0.05 % at 100 ms), more than a tenth of the controller's budget at
    // rest. Lag worth alerting on is far coarser than 100 ms.
    if (options.processMetrics === true)
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: LAG_SAMPLE_MS });
  }

  /** Where the leader gauge reads whether this replica may act. Default: always (no election). */
  leaderFrom(leading: () => boolean): void {
    this.#leading = leading;
  }

  /**
   * Records one pass's judgement of every node: the count of lost nodes, and for each node newly
   * judged lost the time since `lastSignAt` (its last sign of life, on the same clock as `nowMs`),
   * counted only when `acting` (a standby remembers when it judged the node lost, for the time to
   * recover should it take over, but leaves the histogram to the leader: no loss counted twice).
   * A node absent from `health` has left the cluster: its series go.
   */
  observeNodes(
    health: ReadonlyMap<string, NodeHealth>,
    nowMs: number,
    lastSignAt: (node: string) => number | undefined,
    acting = true,
  ): void {
    let lost = 0;
    for (const [node, h] of health) {
      if (h.state !== "unhealthy") {
        this.#lostAt.delete(node);
        continue;
      }
      lost += 1;
      if (this.#lostAt.has(node)) continue;
      this.#lostAt.set(node, nowMs);
      const since = lastSignAt(node);
      if (acting && since !== undefined) this.#detect.observe(seconds(nowMs - since));
    }
    this.#unhealthy.set(lost);
    for (const node of [...this.#lostAt.keys(), ...this.#nodesWithSeries]) {
      if (!health.has(node)) this.nodeGone(node);
    }
  }

  /** Forgets a node that left the cluster: its per-node series and what was remembered of it. */
  nodeGone(node: string): void {
    this.#lostAt.delete(node);
    if (!this.#nodesWithSeries.delete(node)) return;
    this.#timeToFence.remove({ node });
    this.#timeToRecover.remove({ node });
  }

  fenceResult(result: FenceResult): void {
    this.#fences.inc({ result });
  }

  /** A fence's power-off confirmed at `nowMs`: counts a success and times it from the fence's start. */
  fenceConfirmed(node: string, status: FenceStatus, nowMs: number): void {
    this.fenceResult("success");
    const started = parseTime(status.fenceStarts?.at(-1)) ?? parseTime(status.detectedAt);
    if (started === undefined) return;
    this.#fence.observe(seconds(nowMs - started));
    this.#nodesWithSeries.add(node);
    this.#timeToFence.set({ node }, seconds(nowMs - (parseTime(status.detectedAt) ?? started)));
  }

  /** A fenced node's workloads released at `nowMs`: time to recover, from when it was judged lost. */
  cleanedUp(node: string, status: FenceStatus, nowMs: number): void {
    const detected = parseTime(status.detectedAt);
    const lost = this.#lostAt.get(node) ?? detected;
    if (lost !== undefined) this.#recovery.observe(seconds(nowMs - lost));
    if (detected === undefined) return;
    this.#nodesWithSeries.add(node);
    this.#timeToRecover.set({ node }, seconds(nowMs - detected));
  }

  guardHold(reason: string): void {
    this.#guardHolds.inc({ reason });
  }

  /** A failed API call or reconcile step, counted by its kind. */
  apiError(error: unknown): void {
    this.#apiErrors.inc({ kind: errorKind(error) });
  }

  /** A failed fence driver call, counted by driver and kind. */
  driverError(driver: string, error: unknown): void {
    this.#driverErrors.inc({ driver, kind: errorKind(error) });
  }

  /**
   * One sample's value: `name` is a sample name as exposed (a histogram's `…_count`, `…_sum` or
   * `…_bucket`), `labels` all of its labels. 0 when there is no such sample.
   */
  async value(name: string, labels: Record<string, string | number> = {}): Promise<number> {
    const wanted = Object.entries(labels).map(([k, v]) => [k, String(v)] as const);
    for (const family of await this.registry.getMetricsAsJSON()) {
      for (const sample of family.values) {
        const sampleName = (sample as { metricName?: string }).metricName ?? family.name;
        if (sampleName !== name) continue;
        const got = Object.entries(sample.labels);
        if (got.length !== wanted.length) continue;
        if (wanted.every(([k, v]) => String(sample.labels[k]) === v)) return sample.value;
      }
    }
    return 0;
  }

  /** The text exposition of every metric. */
  exposition(): Promise<string> {
    return this.registry.metrics();
  }

  /** Serves /metrics (this registry) and /healthz: see metrics-server.ts. */
  serve(options: ServeOptions): ReturnType<typeof serveMetrics> {
    return serveMetrics(this.registry, options);
  }
}
