// The recovery controller: detect → guard → fence → taint out-of-service → clean up → recover.
// Every step is persisted in the node's NodeFence before the next one starts, so a restarted (or
// newly elected) controller resumes exactly there and never fences twice.
// This file is the loop and its lifecycle; what it reads comes from watch caches (cluster-caches.ts),
// what it sees of the nodes is in observations.ts, the policy in plan.ts, the steps in actions.ts
// and cleanup.ts, the NodeFence objects in node-fence-store.ts, the clean-ups of what no fence owns
// any more in orphans.ts.
import { setMaxListeners } from "node:events";
import { errorMessage } from "../errors.js";
import type { k8s } from "../kube/client.js";
import { boundedSignal } from "../util/abort.js";
import { BackgroundTasks, forEachBounded } from "../util/bounded-parallel.js";
import { clockFrom, type Clock } from "../util/clock.js";
import { sleep } from "../util/time.js";
import { boundedKubeConfig } from "../kube/bounded-client.js";
import { SharedAgents } from "../kube/shared-agents.js";
import { countFailure, type ActionContext } from "./action-context.js";
import { progressFenceSteps, startFence } from "./actions.js";
import { describeHeld } from "./cleanup.js";
import { ClusterCaches } from "./cluster-caches.js";
import type { ControllerConfig } from "./config.js";
import { fenceDriverFor, type FenceDriverRegistry } from "./drivers/registry.js";
import { EVENT_REASONS, recordNodeEvent, type EventReason } from "./events.js";
import type { FenceConfig } from "./fence-config.js";
import type { FenceAction, NodeFence } from "./fence-state.js";
import type { LeaderElector } from "./leader.js";
import { ControllerMetrics } from "./metrics.js";
import { NodeFenceStore } from "./node-fence-store.js";
import { NodeObservations } from "./observations.js";
import { FenceStepRunner, stepRunContext } from "./fence-steps.js";
import { HoldNotices } from "./hold-notices.js";
import { driverPowerReader, EarlyPowerReads, earlyReadCandidates, watchPowerLosses } from "./early-power.js";
import { PassBounds } from "./pass-bounds.js";
import { PassSchedule } from "./pass-schedule.js";
import { controllerLiveness } from "./liveness.js";
import { checkFenceStart } from "./fence-start.js";
import { lostNow, type CurrentNodeReader } from "./present.js";
import { cancelledByHand, clearCancelled, releaseFence, supersedeFence, sweepOrphans } from "./orphans.js";
import type { NodeHealth } from "./detect.js";
import { guardDecision, type GuardNode } from "./guard.js";
import { FenceRateLimiter, type FenceRateClass } from "./fence-rate.js";
import { fleetView } from "./fleet.js";
import { assessNodes, guardNodes, planNode, type NodePlan } from "./plan.js";
import type { Snapshot } from "./snapshot.js";

export { FENCING_TAINT, OUT_OF_SERVICE_VALUE } from "./node-effects.js";

export interface RecoveryControllerOptions {
  kc: k8s.KubeConfig;
  config: ControllerConfig;
  fenceConfig: FenceConfig;
  /** Fence drivers by name: the generic ones plus the provider's own, registered by the caller. */
  drivers: FenceDriverRegistry;
  /** Where the controller counts and times what it does. Default: a new ControllerMetrics without process metrics. */
  metrics?: ControllerMetrics;
  log?: (message: string) => void;
  /**
   * Injectable clock (ms) for durations and timestamps alike (tests). Default: durations on the
   * monotonic clock, timestamps written to NodeFences on the wall clock (lib/util/clock.ts).
   */
  now?: () => number;
  /**
   * Where a side effect reads a node's current state right before it acts (lib/controller/present.ts).
   * Default: the controller's Lease and Node watch caches.
   */
  currentNode?: CurrentNodeReader;
  /**
   * Test seam: never perform this action (the controller "dies" right before it), or hold every
   * action for which the function says true (the scenario releases it later).
   */
  haltBefore?: FenceAction | ((action: FenceAction, node: string) => boolean);
  /** With several replicas: only the Lease holder acts; the others keep observing. Default: always active. */
  leader?: LeaderElector;
}

export class RecoveryController {
  readonly metrics: ControllerMetrics;
  readonly #options: RecoveryControllerOptions;
  readonly #context: ActionContext;
  readonly #observations: NodeObservations;
  readonly #caches: ClusterCaches;
  readonly #clock: Clock;
  readonly #bounds: PassBounds;
  /** Holds and "nothing to release", said once (hold-notices.ts). */
  readonly #holds: HoldNotices;
  /** Per node, since when this controller has seen it healthy without a break. */
  readonly #healthySince = new Map<string, number>();
  /** The fleet-wide fence rate (fence-rate.ts), on the monotonic clock. */
  readonly #rate: FenceRateLimiter;
  /** Power reads of silent nodes (early-power.ts). */
  readonly #early: EarlyPowerReads;
  /** The steps of fences, their starts included, beside the passes (fence-steps.ts). */
  readonly #steps: FenceStepRunner;
  /** Event writes of holds, beside the passes (hold-notices.ts): cheap, so more at once than steps. */
  readonly #writes = new BackgroundTasks(16);
  readonly #stopped = new AbortController();
  /** Connections the controller's API calls reuse (client-node would open one per call). */
  readonly #agents = new SharedAgents();
  /** Ends the wait for the next pass early (an early power read found a node off). */
  #wake = new AbortController();
  #loop: Promise<void> | undefined;
  #lastPassAt: number | undefined;
  readonly #schedule = new PassSchedule();
  #lastPassError: string | undefined;
  /** Nodes of the last pass with no evidence either way yet ("unobserved"). */
  #unobserved: string[] | undefined;

  constructor(options: RecoveryControllerOptions) {
    this.#options = options;
    // The pass, the early power reads and the loop's wait all listen (see pass-bounds.ts).
    setMaxListeners(0, this.#stopped.signal);
    this.metrics = options.metrics ?? new ControllerMetrics();
    const { kc, config, fenceConfig, drivers, leader } = options;
    this.metrics.leaderFrom(() => leader?.isLeader ?? true);
    const log = options.log ?? (() => undefined);
    this.#clock = clockFrom(options.now);
    this.#rate = new FenceRateLimiter(config);
    this.#steps = new FenceStepRunner({ limit: config.nodeConcurrency });
    const monotonic = this.#clock.monotonicMs;
    this.#bounds = new PassBounds({ config, leader, now: monotonic, stopped: this.#stopped.signal });
    this.#observations = new NodeObservations({
      unhealthyAfterMs: config.unhealthyAfterMs,
      checkIntervalMs: config.checkIntervalMs,
    });
    const acting = (): AbortSignal =>
      leader ? AbortSignal.any([this.#bounds.signal, leader.signal]) : this.#bounds.signal;
    // Every API call of the controller's ends at its timeout (pass-bounds.ts); reads go on when
    // leadership ends (a standby reads too), writes check acting() first.
    const bounded = boundedKubeConfig(
      kc,
      { timeoutMs: () => this.#bounds.apiTimeoutMs(), signal: () => this.#bounds.signal },
      this.#agents,
    );
    // Every replica keeps the caches: a standby's are warm when it takes over. Their LISTs end at
    // apiTimeout or when the controller stops, never with a pass.
    this.#caches = new ClusterCaches({
      kc,
      config,
      now: monotonic,
      log,
    });
    const currentNode = options.currentNode ?? this.#caches.currentNode;
    this.#context = {
      kc: bounded,
      reads: this.#caches,
      config,
      store: new NodeFenceStore(bounded),
      metrics: this.metrics,
      now: this.#clock.wallMs,
      log,
      event: async (
        node: string,
        reason: EventReason,
        message: string,
        type: "Normal" | "Warning" = "Normal",
      ) => {
        await recordNodeEvent(bounded, node, reason, message, type).catch((error: unknown) => {
          countFailure(this.#context, error);
          log(`event ${reason} for ${node} not recorded: ${errorMessage(error)}`);
        });
      },
      driver: (node: string) => fenceDriverFor(drivers, bounded, fenceConfig, node, config.namespace),
      acting,
      driverSignal: () => boundedSignal(acting(), this.#bounds.driverTimeoutMs(), "the fence driver call"),
      lostNow: (node: string) =>
        lostNow(node, {
          read: currentNode,
          observation: this.#observations.get(node),
          now: monotonic,
          unhealthyAfterMs: config.unhealthyAfterMs,
        }),
    };
    this.#holds = new HoldNotices(this.#context, this.#writes);
    this.#early = new EarlyPowerReads({
      observations: this.#observations,
      checkIntervalMs: config.checkIntervalMs,
      unhealthyAfterMs: config.unhealthyAfterMs,
      maxConcurrent: config.nodeConcurrency,
      // Not bounded by a pass (none waits for these reads): by the driver timeout, and by the
      // controller stopping or its leadership ending.
      read: driverPowerReader(
        this.#context,
        () => (leader ? AbortSignal.any([this.#stopped.signal, leader.signal]) : this.#stopped.signal),
        () => this.#bounds.driverTimeoutMs(),
      ),
      log,
      now: monotonic,
      current: currentNode,
      onPoweredOff: () => {
        this.#wake.abort();
      },
    });
  }

  /** Runs reconcile passes every checkInterval until `stop()`. Errors are logged and retried. */
  start(): void {
    if (this.#loop) return;
    this.#options.leader?.start();
    this.#caches.start();
    const { config, drivers, fenceConfig, log = () => undefined } = this.#options;
    const watch = { signal: this.#stopped.signal, log };
    if (config.earlyPowerRead) watchPowerLosses(this.#early, drivers, fenceConfig, watch);
    const signal = this.#stopped.signal;
    this.#loop = (async () => {
      while (!signal.aborted) {
        // Renewed before the pass: a read that finds a node off during it cuts the next wait short.
        this.#wake = new AbortController();
        try {
          // Not waiting for the fence steps it started: they run beside the next passes.
          await this.#boundedPass();
          this.#lastPassError = undefined;
        } catch (error) {
          const wasBlind = this.#lastPassError?.startsWith("blind: ") === true;
          this.#lastPassError = errorMessage(error);
          countFailure(this.#context, error);
          // A pass cut short by stop() is no failure worth a log line; blindness is said once.
          if (!this.#stopped.signal.aborted && !(wasBlind && this.#lastPassError.startsWith("blind: "))) {
            this.#context.log(`reconcile failed (retrying): ${this.#lastPassError}`);
          }
        }
        try {
          const sleepMs = this.#schedule.sleepMs(this.#clock.monotonicMs(), config.checkIntervalMs);
          await sleep(sleepMs, AbortSignal.any([signal, this.#wake.signal]));
        } catch {
          if (this.#stopped.signal.aborted) break;
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped.abort(new Error("controller stopped"));
    await this.#loop;
    await this.#steps.settle();
    await this.#writes.settle();
    this.#early.stop();
    await this.#early.settle();
    await this.#options.leader?.stop();
    await this.#caches.stop();
    this.#agents.destroy();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /**
   * Nodes this controller has no evidence about yet (not seen renewing since it started, nor silent
   * for unhealthyAfter); undefined before its first pass. A fresh controller knows nothing of the
   * renewals before it started, so it detects a loss up to one renewal interval later than a warm
   * one: scenarios wait until this is empty before they inject a fault.
   */
  unobservedNodes(): readonly string[] | undefined {
    return this.#unobserved;
  }

  /**
   * Healthy when a pass (acting or, as a standby, observing) completed recently. A pass completes
   * only while the watch caches it reads are current: a controller blind for longer than the limit
   * is unhealthy, so fencing never stops silently.
   */
  health(): { ok: boolean; message: string } {
    const leader = this.#options.leader;
    const record = {
      running: this.#loop !== undefined,
      lastPassAt: this.#lastPassAt,
      lastPassError: this.#lastPassError,
    };
    return controllerLiveness(this.#options.config, record, this.#clock.monotonicMs(), {
      role: leader ? (leader.isLeader ? "leader" : "standby") : "active",
      staleness: () => this.#caches.staleness(),
    });
  }

  /**
   * One pass, and the fence steps it started, awaited (tests, one-shot use). A pass reads, then
   * carries out each node's plan for up to nodeConcurrency nodes at once, within passTimeout
   * (pass-bounds.ts); the plans are made first, from one read: the guard's counts do not depend on
   * the order (a node it lets fence is already counted as unhealthy). The steps of fences run
   * beside it (fence-steps.ts), each run within passTimeout of its own.
   */
  async reconcileOnce(): Promise<void> {
    await this.#boundedPass();
    await this.#steps.settle();
    await this.#writes.settle();
  }

  async #boundedPass(): Promise<void> {
    this.#bounds.begin();
    try {
      await this.#pass();
    } finally {
      this.#bounds.end();
    }
  }

  async #pass(): Promise<void> {
    const { config, log } = this.#context;
    const { snapshot, health, now } = await this.#observe();
    // A standby keeps observing (so its clocks are warm when it takes over) but never acts.
    if (this.#options.leader && !this.#options.leader.isLeader) return;
    await sweepOrphans(this.#context, snapshot);
    const guard = guardNodes(snapshot, health, config.excludeLabel, config.nodeSelector);
    if (config.earlyPowerRead) this.#early.launch(earlyReadCandidates(guard, snapshot.paused));
    const fleet = { view: fleetView(guard, health, this.#observations, now, config), settings: config };
    // Only nodes with something to do take a slot (1000 async calls a pass: much garbage at rest).
    const plans: { node: k8s.V1Node; name: string; plan: NodePlan; clearCancellation: boolean }[] = [];
    for (const node of snapshot.nodes) {
      const name = node.metadata?.name ?? "";
      const plan = planNode(name, snapshot, this.#observations, health, guard, config, fleet);
      // A cancellation by hand lasts until the node has been healthy (kept on the Node: restarts too).
      const clearCancellation = health.get(name)?.state === "healthy" && cancelledByHand(node);
      if (plan.kind === "none" && !clearCancellation) this.#holds.clear(name, plan.healthy);
      else plans.push({ node, name, plan, clearCancellation });
    }
    this.#schedule.afterPass(now, config, health, this.#observations, plans);
    await forEachBounded(plans, config.nodeConcurrency, async ({ node, name, plan, clearCancellation }) => {
      try {
        if (clearCancellation) {
          await clearCancelled(this.#context, node).catch((error: unknown) => {
            countFailure(this.#context, error);
            log(`${name}: cancellation by hand not cleared: ${errorMessage(error)}`);
          });
        }
        this.#act(node, plan, guard, now, snapshot.paused);
      } catch (error) {
        countFailure(this.#context, error);
        log(`node ${name}: ${errorMessage(error)}`);
      }
    });
  }

  /**
   * Takes the caches' view and records it: every node's health, how long each has been healthy, the
   * metrics. Throws (the pass decides nothing) while the caches are not current: blind.
   */
  async #observe(): Promise<{ snapshot: Snapshot; health: Map<string, NodeHealth>; now: number }> {
    const { config, log } = this.#context;
    await this.#caches.whenSynced(config.apiTimeoutMs);
    const now = this.#clock.monotonicMs();
    const blind = this.#caches.takeBlindSpell(now);
    if (blind) this.#observations.recordBlind(blind.sinceAt, blind.untilAt);
    const snapshot = this.#caches.snapshot(now);
    const news = this.#observations.record(snapshot, now);
    if (news.blindForMs !== undefined) {
      log(
        `saw the API again after ${Math.round(news.blindForMs / 1000)}s blind: every node gets unhealthyAfter to renew before any new fence`,
      );
    }
    if (news.returned.length > 0) {
      log(`renewed after a silence: ${news.returned.join(", ")} (nodes silent with them get a fresh chance)`);
    }
    const health = assessNodes(snapshot, this.#observations, now, config.unhealthyAfterMs);
    for (const [name, h] of health) {
      if (h.state === "healthy") this.#healthySince.set(name, this.#healthySince.get(name) ?? now);
      else this.#healthySince.delete(name);
    }
    // Also where a node that left the cluster loses its series.
    const acting = this.#options.leader === undefined || this.#options.leader.isLeader;
    this.metrics.observeNodes(health, now, (name) => this.#observations.get(name)?.lastSignAt, acting);
    this.#lastPassAt = now;
    // Pods are watched for the nodes that may be fenced or are: lost, or with a fence under way.
    const podsOf = new Set<string>();
    this.#unobserved = [];
    for (const [name, h] of health) {
      if (h.state === "unobserved") this.#unobserved.push(name);
      else if (h.state === "unhealthy") podsOf.add(name);
    }
    for (const [name, fence] of snapshot.fences)
      if (fence.status?.step !== "recovery" || fence.status.phase !== "done") podsOf.add(name);
    this.#caches.retainPods(podsOf);
    this.#early.retain(new Set(health.keys()));
    return { snapshot, health, now };
  }

  /** Carries out one node's plan for this pass. */
  #act(node: k8s.V1Node, plan: NodePlan, guard: readonly GuardNode[], now: number, paused: boolean): void {
    const name = node.metadata?.name ?? "";
    // A node's fence steps under way (or waiting for a slot) are left to finish: the first pass
    // after them decides again on what it reads then.
    if (plan.kind !== "none" && plan.kind !== "hold" && this.#steps.busy(name)) return;
    switch (plan.kind) {
      case "release":
        this.#launchSteps(name, (context) => releaseFence(context, plan.fence));
        break;
      case "supersede":
        this.#launchSteps(name, (context) => supersedeFence(context, plan.fence));
        break;
      case "progress": {
        const healthySince = this.#healthySince.get(name);
        const healthyForMs = healthySince === undefined ? 0 : now - healthySince;
        this.#launchSteps(name, (context) =>
          this.#progress(context, name, plan.fence, plan.health.state, healthyForMs, guard, paused),
        );
        break;
      }
      case "wait-for-peers":
        this.#holds.waitingForPeers(name, plan.waiting);
        break;
      case "hold":
        this.#holds.hold(name, plan.reason, `not fencing ${name} (${plan.lostBecause}): ${plan.message}`);
        break;
      case "fence": {
        // Its start too: the checks and the NodeFence's creation are API calls, and a zone's
        // worth of them would hold the pass back as its steps did.
        this.#launchSteps(name, async (context) => {
          const fence = await this.#fence(context, node, plan.lostBecause, plan.previous, plan.rate);
          if (fence) await this.#progress(context, name, fence, "unhealthy", 0, guard, paused);
        });
        break;
      }
      case "none":
        this.#holds.clear(name, plan.healthy);
        break;
    }
  }

  /**
   * Runs `steps` for `name` beside the passes (fence-steps.ts), with a context whose side effects
   * end passTimeout after the run starts, when the controller stops, or when its term ends.
   */
  #launchSteps(name: string, steps: (context: ActionContext) => Promise<unknown>): void {
    const { config, log } = this.#context;
    const leader = this.#options.leader;
    this.#steps.run(name, async () => {
      const stopped = this.#stopped.signal;
      const parent = leader ? AbortSignal.any([stopped, leader.signal]) : stopped;
      const run = stepRunContext(this.#context, name, parent, {
        runMs: config.passTimeoutMs,
        driverTimeoutMs: () => this.#bounds.driverTimeoutMs(),
      });
      try {
        await steps(run.context);
      } catch (error) {
        countFailure(run.context, error);
        log(`node ${name}: ${errorMessage(error)}`);
      } finally {
        run.dispose();
      }
    });
  }

  /** The next steps of a fence under way (as many as can follow at once: progressFenceSteps). */
  async #progress(
    context: ActionContext,
    name: string,
    fence: NodeFence,
    health: NodeHealth["state"],
    healthyForMs: number,
    guard: readonly GuardNode[],
    paused: boolean,
  ): Promise<void> {
    const { maxUnhealthy } = context.config;
    await progressFenceSteps(context, fence, { health, healthyForMs }, this.#options.haltBefore, {
      // Fences under way, hand-made ones too, pass the guard before every power action.
      decide: () => guardDecision(name, { nodes: guard, maxUnhealthy, paused }),
      held: (reason, message) => {
        this.#holds.hold(name, reason, message);
      },
    });
  }

  /**
   * Fences a lost node the guard allows, unless it holds nothing to release, a person cancelled its
   * fence, or it was fenced too often lately.
   */
  async #fence(
    context: ActionContext,
    node: k8s.V1Node,
    lostBecause: string,
    previous: NodeFence | undefined,
    rate: FenceRateClass,
  ): Promise<NodeFence | undefined> {
    const name = node.metadata?.name ?? "";
    const check = await checkFenceStart(context, node, lostBecause, previous);
    if (!check.start && check.nothingToRelease === true) {
      this.#holds.nothingToRelease(name, lostBecause);
      return undefined;
    }
    // It holds something again (a cancellation by hand is checked before what it holds).
    if (check.start || check.reason !== "CancelledByHand") this.#holds.holdsSomething(name);
    if (!check.start) {
      this.#holds.hold(name, check.reason, check.message, check.event);
      return undefined;
    }
    const { driverName, held } = check;
    // Last, so only a fence that really starts takes a token of the fleet-wide rate.
    const taken = this.#rate.take(rate, this.#clock.monotonicMs());
    if (!taken.taken) {
      const message = `not fencing ${name} (${lostBecause}) yet: ${taken.message}`;
      this.#holds.hold(name, "FleetRate", message, EVENT_REASONS.fleetRateHeld);
      return undefined;
    }
    this.#holds.clear(name);
    this.#context.log(`${name} holds ${describeHeld(held)}: fencing it releases them`);
    return startFence(context, node, lostBecause, driverName, previous);
  }
}
