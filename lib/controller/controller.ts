// The recovery controller: detect → guard → fence → taint out-of-service → clean up → recover.
// Every step is persisted in the node's NodeFence before the next one starts, so a restarted (or
// newly elected) controller resumes exactly there and never fences twice.
// This file is the loop and its lifecycle; the policy is in plan.ts, the steps in actions.ts and
// cleanup.ts, the NodeFence objects in node-fence-store.ts.
import { errorMessage } from "../errors.js";
import type { k8s } from "../kube/client.js";
import { sleep } from "../util/time.js";
import type { ActionContext } from "./action-context.js";
import { progressFence, startFence } from "./actions.js";
import { workloadsHeld } from "./cleanup.js";
import type { ControllerConfig } from "./config.js";
import { fenceDriverFor, type FenceDriverRegistry } from "./drivers/registry.js";
import { EVENT_REASONS, recordNodeEvent, type EventReason } from "./events.js";
import type { FenceConfig } from "./fence-config.js";
import type { FenceAction, NodeFence } from "./fence-state.js";
import type { LeaderElector } from "./leader.js";
import { METRICS, MetricsRegistry } from "./metrics.js";
import { NodeFenceStore } from "./node-fence-store.js";
import { assessNodes, guardNodes, planNode } from "./plan.js";
import { readSnapshot } from "./snapshot.js";

export { FENCING_TAINT } from "./actions.js";

export interface RecoveryControllerOptions {
  kc: k8s.KubeConfig;
  config: ControllerConfig;
  fenceConfig: FenceConfig;
  /** Fence drivers by name: the generic ones plus the provider's own, registered by the caller. */
  drivers: FenceDriverRegistry;
  metrics?: MetricsRegistry;
  log?: (message: string) => void;
  /** Injectable clock (ms). Default Date.now. */
  now?: () => number;
  /** Test seam: never perform this action (the controller "dies" right before it). */
  haltBefore?: FenceAction;
  /** With several replicas: only the Lease holder reconciles. Default: always active. */
  leader?: LeaderElector;
}

export class RecoveryController {
  readonly metrics: MetricsRegistry;
  readonly #options: RecoveryControllerOptions;
  readonly #context: ActionContext;
  /** Per node, the last reason it was held (log and Event once per reason, not every pass). */
  readonly #lastHold = new Map<string, string>();
  /** Lost nodes already reported as having nothing to release (one Event per outage). */
  readonly #nothingToRelease = new Set<string>();
  #abort: AbortController | undefined;
  #loop: Promise<void> | undefined;

  constructor(options: RecoveryControllerOptions) {
    this.#options = options;
    this.metrics = options.metrics ?? new MetricsRegistry();
    const { kc, config, fenceConfig, drivers } = options;
    const log = options.log ?? (() => undefined);
    this.#context = {
      kc,
      config,
      store: new NodeFenceStore(kc),
      metrics: this.metrics,
      now: options.now ?? Date.now,
      log,
      event: async (
        node: string,
        reason: EventReason,
        message: string,
        type: "Normal" | "Warning" = "Normal",
      ) => {
        await recordNodeEvent(kc, node, reason, message, type).catch((error: unknown) => {
          log(`event ${reason} for ${node} not recorded: ${errorMessage(error)}`);
        });
      },
      driver: (node: string) => fenceDriverFor(drivers, kc, fenceConfig, node, config.namespace),
    };
  }

  /** Runs reconcile passes every checkInterval until `stop()`. Errors are logged and retried. */
  start(): void {
    if (this.#loop) return;
    const abort = new AbortController();
    this.#abort = abort;
    this.#loop = (async () => {
      while (!abort.signal.aborted) {
        try {
          const leading = this.#options.leader ? await this.#options.leader.tryAcquireOrRenew() : true;
          if (leading) await this.reconcileOnce();
          this.#lastPassAt = (this.#options.now ?? Date.now)();
        } catch (error) {
          this.#context.log(`reconcile failed (retrying): ${errorMessage(error)}`);
        }
        try {
          await sleep(this.#options.config.checkIntervalMs, abort.signal);
        } catch {
          break;
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.#abort?.abort();
    await this.#loop;
    this.#loop = undefined;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  async reconcileOnce(): Promise<void> {
    const { kc, config, store, log } = this.#context;
    const snapshot = await readSnapshot(kc, config, store);
    const health = assessNodes(snapshot, this.#context.now(), config.unhealthyAfterMs);
    this.metrics.set(
      METRICS.unhealthy[0],
      METRICS.unhealthy[1],
      [...health.values()].filter((h) => h.state === "unhealthy").length,
    );
    const guard = guardNodes(snapshot, health, config.excludeLabel);
    for (const node of snapshot.nodes) {
      const name = node.metadata?.name ?? "";
      try {
        const plan = planNode(name, snapshot, health, guard, config);
        switch (plan.kind) {
          case "progress":
            await progressFence(this.#context, plan.fence, plan.nodeHealthy, this.#options.haltBefore);
            break;
          case "wait-for-peers": {
            const waiting = plan.waiting.join(", ");
            if (this.#holdChanged(name, `waiting:${waiting}`)) {
              log(`${name} lost; waiting for ${waiting} to renew or be judged lost too`);
            }
            break;
          }
          case "hold":
            if (this.#holdChanged(name, plan.reason)) {
              this.metrics.inc(METRICS.guardHolds[0], METRICS.guardHolds[1], { reason: plan.reason });
              log(`guard holds ${name}: ${plan.message}`);
              await this.#context.event(
                name,
                EVENT_REASONS.guardHeld,
                `not fencing ${name} (${plan.lostBecause}): ${plan.message}`,
                "Warning",
              );
            }
            break;
          case "fence":
            this.#lastHold.delete(name);
            if (await this.#fence(name, plan.lostBecause, plan.previous)) {
              // Count it at once, so the guard sees it for the next node in this same pass.
              const entry = guard.find((g) => g.name === name);
              if (entry) entry.fencing = true;
            }
            break;
          case "none":
            this.#lastHold.delete(name);
            if (plan.healthy) this.#nothingToRelease.delete(name);
            break;
        }
      } catch (error) {
        log(`node ${name}: ${errorMessage(error)}`);
      }
    }
  }

  /** True (and remembered) when `node` is held for another reason than last time. */
  #holdChanged(node: string, reason: string): boolean {
    if (this.#lastHold.get(node) === reason) return false;
    this.#lastHold.set(node, reason);
    return true;
  }

  /**
   * Fences a lost node the guard allows, unless it holds nothing to release. False only in that
   * case; otherwise the guard counts the node as fencing for the rest of the pass, even when no
   * driver could be found for it.
   */
  async #fence(node: string, lostBecause: string, previous: NodeFence | undefined): Promise<boolean> {
    if ((await workloadsHeld(this.#context.kc, node)) === 0) {
      // A graceful shutdown ended every pod and released every volume itself; so does an
      // empty node. Fencing would protect nothing, and a node shut down on purpose stays so.
      if (!this.#nothingToRelease.has(node)) {
        this.#nothingToRelease.add(node);
        await this.#context.event(
          node,
          EVENT_REASONS.nothingToRelease,
          `not fencing ${node} (${lostBecause}): no running pods and no attached volumes to release`,
        );
      }
      return false;
    }
    this.#nothingToRelease.delete(node);
    // No way to fence means no fence at all: never taint or claim a node we cannot power off.
    let driverName: string;
    try {
      driverName = (await this.#context.driver(node)).driver.name;
    } catch (error) {
      const message = `cannot fence ${node}: ${errorMessage(error)}`;
      if (this.#holdChanged(node, "NoFenceDriver")) {
        this.#context.log(message);
        await this.#context.event(node, EVENT_REASONS.fenceFailed, message, "Warning");
      }
      return true;
    }
    await startFence(this.#context, node, lostBecause, driverName, previous);
    return true;
  }

  // Minimal health for /healthz until the lead's version lands (controller-config branch).
  #lastPassAt: number | undefined;

  /**
   * Healthy while a pass (a reconcile, or a standby's Lease check) completed within the last
   * max(5 check intervals, 30 s); unhealthy before the first one.
   */
  health(): { ok: boolean; message: string } {
    if (this.#lastPassAt === undefined) return { ok: false, message: "no pass completed yet" };
    const ageMs = (this.#options.now ?? Date.now)() - this.#lastPassAt;
    const limitMs = Math.max(5 * this.#options.config.checkIntervalMs, 30_000);
    return ageMs <= limitMs
      ? { ok: true, message: `last pass ${ageMs} ms ago` }
      : { ok: false, message: `no pass completed for ${ageMs} ms (limit ${limitMs} ms)` };
  }
}
