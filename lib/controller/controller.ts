// The recovery controller: detect → guard → fence → taint out-of-service → clean up → recover.
// Every step is persisted in the node's NodeFence before the next one starts, so a restarted (or
// newly elected) controller resumes exactly there and never fences twice.
import { errorMessage } from "../errors.js";
import { isNotFound, isPodTerminal, k8s } from "../kube/client.js";
import {
  isControlPlaneNode,
  OUT_OF_SERVICE_TAINT,
  podsOnNode,
  volumeAttachmentsOnNode,
  ZONE_LABEL,
} from "../kube/queries.js";
import { addTaint, removeTaint } from "../kube/taints.js";
import { sleep } from "../util/time.js";
import type { ControllerConfig } from "./config.js";
import { assessNode, possiblyLostTogether, type NodeHealth } from "./detect.js";
import type { FenceDriverRegistry } from "./drivers/registry.js";
import { hasPowerOn, type FenceDriver, type FenceTarget } from "./drivers/types.js";
import { EVENT_REASONS, recordNodeEvent, type EventReason } from "./events.js";
import { resolveFenceTarget, type FenceConfig } from "./fence-config.js";
import {
  decide,
  isFinished,
  NODE_FENCE_GROUP,
  NODE_FENCE_PLURAL,
  NODE_FENCE_VERSION,
  type FenceAction,
  type FenceStatus,
  type NodeFence,
} from "./fence-state.js";
import { guardDecision, type GuardNode } from "./guard.js";
import type { LeaderElector } from "./leader.js";
import { METRICS, MetricsRegistry } from "./metrics.js";

/** The controller's own taint while it fences a node: nothing new lands there meanwhile. */
export const FENCING_TAINT = "rekindle.dev/fencing";

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

interface Snapshot {
  nodes: k8s.V1Node[];
  leases: Map<string, k8s.V1Lease>;
  fences: Map<string, NodeFence>;
  paused: boolean;
}

export class RecoveryController {
  readonly metrics: MetricsRegistry;
  readonly #options: RecoveryControllerOptions;
  readonly #now: () => number;
  readonly #log: (message: string) => void;
  readonly #lastHold = new Map<string, string>();
  /** Lost nodes already reported as having nothing to release (one Event per outage). */
  readonly #nothingToRelease = new Set<string>();
  #abort: AbortController | undefined;
  #loop: Promise<void> | undefined;

  constructor(options: RecoveryControllerOptions) {
    this.#options = options;
    this.metrics = options.metrics ?? new MetricsRegistry();
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? (() => undefined);
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
        } catch (error) {
          this.#log(`reconcile failed (retrying): ${errorMessage(error)}`);
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
    const snapshot = await this.#snapshot();
    const now = this.#now();
    const { config } = this.#options;
    const health = new Map<string, NodeHealth>();
    for (const node of snapshot.nodes) {
      const name = node.metadata?.name ?? "";
      health.set(name, assessNode(node, snapshot.leases.get(name), now, config.unhealthyAfterMs));
    }
    this.metrics.set(
      METRICS.unhealthy[0],
      METRICS.unhealthy[1],
      [...health.values()].filter((h) => h.state === "unhealthy").length,
    );
    const guardNodes: GuardNode[] = snapshot.nodes.map((node) => {
      const name = node.metadata?.name ?? "";
      const fence = snapshot.fences.get(name);
      return {
        name,
        zone: node.metadata?.labels?.[ZONE_LABEL] ?? "",
        controlPlane: isControlPlaneNode(node),
        excluded: node.metadata?.labels?.[config.excludeLabel] !== undefined,
        unhealthy: health.get(name)?.state === "unhealthy",
        fencing: fence !== undefined && !isFinished(fence.status),
      };
    });
    for (const node of snapshot.nodes) {
      const name = node.metadata?.name ?? "";
      const nodeHealth = health.get(name) ?? { state: "healthy" };
      const fence = snapshot.fences.get(name);
      try {
        if (fence && !isFinished(fence.status)) {
          await this.#progress(fence, nodeHealth.state === "healthy");
        } else if (nodeHealth.state === "unhealthy") {
          const undecided = possiblyLostTogether(
            snapshot.leases.get(name),
            guardNodes
              .filter((g) => g.name !== name && !g.controlPlane)
              .map((g) => ({ name: g.name, lease: snapshot.leases.get(g.name), unhealthy: g.unhealthy })),
          );
          if (undecided.length > 0) {
            const waiting = undecided.join(", ");
            if (this.#lastHold.get(name) !== `waiting:${waiting}`) {
              this.#lastHold.set(name, `waiting:${waiting}`);
              this.#log(`${name} lost; waiting for ${waiting} to renew or be judged lost too`);
            }
            continue;
          }
          const decision = guardDecision(name, {
            nodes: guardNodes,
            maxUnhealthy: config.maxUnhealthy,
            paused: snapshot.paused,
          });
          if (decision.allowed) {
            this.#lastHold.delete(name);
            const holding = await this.#workloadsHeld(name);
            if (holding === 0) {
              // A graceful shutdown ended every pod and released every volume itself; so does an
              // empty node. Fencing would protect nothing, and a node shut down on purpose stays so.
              if (!this.#nothingToRelease.has(name)) {
                this.#nothingToRelease.add(name);
                await this.#event(
                  name,
                  EVENT_REASONS.nothingToRelease,
                  `not fencing ${name} (${nodeHealth.reason}): no running pods and no attached volumes to release`,
                );
              }
              continue;
            }
            this.#nothingToRelease.delete(name);
            await this.#startFence(name, nodeHealth.reason, fence);
            // Count it at once, so the guard sees it for the next node in this same pass.
            const entry = guardNodes.find((g) => g.name === name);
            if (entry) entry.fencing = true;
          } else if (this.#lastHold.get(name) !== decision.reason) {
            this.#lastHold.set(name, decision.reason);
            this.metrics.inc(METRICS.guardHolds[0], METRICS.guardHolds[1], { reason: decision.reason });
            this.#log(`guard holds ${name}: ${decision.message}`);
            await this.#event(
              name,
              EVENT_REASONS.guardHeld,
              `not fencing ${name} (${nodeHealth.reason}): ${decision.message}`,
              "Warning",
            );
          }
        } else {
          this.#lastHold.delete(name);
          if (nodeHealth.state === "healthy") this.#nothingToRelease.delete(name);
        }
      } catch (error) {
        this.#log(`node ${name}: ${errorMessage(error)}`);
      }
    }
  }

  // --- steps --------------------------------------------------------------------------------

  async #startFence(node: string, reason: string, existing: NodeFence | undefined): Promise<void> {
    // No way to fence means no fence at all: never taint or claim a node we cannot power off.
    let driverName: string;
    try {
      driverName = (await this.#driver(node)).driver.name;
    } catch (error) {
      const message = `cannot fence ${node}: ${errorMessage(error)}`;
      if (this.#lastHold.get(node) !== "NoFenceDriver") {
        this.#lastHold.set(node, "NoFenceDriver");
        this.#log(message);
        await this.#event(node, EVENT_REASONS.fenceFailed, message, "Warning");
      }
      return;
    }
    const status: FenceStatus = {
      step: "power-management",
      phase: "new",
      retries: 0,
      message: reason,
      detectedAt: new Date(this.#now()).toISOString(),
      lastTransitionTime: new Date(this.#now()).toISOString(),
    };
    const objects = this.#customObjects();
    if (existing) {
      // A finished fence of an earlier loss: start over on the same object.
      await objects.patchClusterCustomObject(
        { ...this.#ref(node), body: { spec: { node, reason, driver: driverName } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      await this.#writeStatus(node, status, true);
    } else {
      const body: NodeFence = {
        apiVersion: `${NODE_FENCE_GROUP}/${NODE_FENCE_VERSION}`,
        kind: "NodeFence",
        metadata: { name: node },
        spec: { node, reason, driver: driverName },
      };
      await objects.createClusterCustomObject({
        group: NODE_FENCE_GROUP,
        version: NODE_FENCE_VERSION,
        plural: NODE_FENCE_PLURAL,
        body,
      });
      await this.#writeStatus(node, status, true);
    }
    await addTaint(this.#options.kc, node, { key: FENCING_TAINT, value: "fencing", effect: "NoSchedule" });
    this.#log(`fencing ${node}: ${reason}`);
    await this.#event(node, EVENT_REASONS.nodeUnhealthy, `${node} is lost: ${reason}`, "Warning");
    await this.#event(node, EVENT_REASONS.fenceStarted, `fencing ${node} with driver ${driverName}`);
  }

  async #progress(fence: NodeFence, nodeHealthy: boolean): Promise<void> {
    const node = fence.spec.node;
    const status: FenceStatus = fence.status ?? { step: "power-management", phase: "new", retries: 0 };
    const stalePods = status.step === "recovery" ? await this.#stalePods(node) : 0;
    const { config } = this.#options;
    const action = decide(status, { nodeHealthy, stalePods, nowMs: this.#now() }, config);
    if (action === "wait" || action === this.#options.haltBefore) return;
    const now = () => new Date(this.#now()).toISOString();
    switch (action) {
      case "power-off": {
        const { driver, target } = await this.#driver(node);
        try {
          await driver.powerOff(target);
          await this.#writeStatus(node, {
            ...status,
            phase: "running",
            message: `power off requested via ${driver.name}`,
            lastTransitionTime: now(),
          });
        } catch (error) {
          await this.#fenceFailed(
            node,
            status,
            `power off via ${driver.name} failed: ${errorMessage(error)}`,
          );
        }
        return;
      }
      case "confirm-off": {
        const { driver, target } = await this.#driver(node);
        const state = await driver.powerState(target).catch(() => "unknown" as const);
        if (state === "off") {
          await this.#writeStatus(node, {
            ...status,
            phase: "done",
            fencedAt: now(),
            message: `power off confirmed by ${driver.name}`,
            lastTransitionTime: now(),
          });
          this.metrics.inc(METRICS.fences[0], METRICS.fences[1], { result: "success" });
          const detected = status.detectedAt ? Date.parse(status.detectedAt) : this.#now();
          this.metrics.set(METRICS.timeToFence[0], METRICS.timeToFence[1], (this.#now() - detected) / 1000, {
            node,
          });
          await this.#event(
            node,
            EVENT_REASONS.fenceSucceeded,
            `${node} powered off (confirmed by ${driver.name})`,
          );
        } else if (this.#now() - Date.parse(status.lastTransitionTime ?? "") > config.fenceConfirmTimeoutMs) {
          await this.#fenceFailed(
            node,
            status,
            `power off not confirmed within ${config.fenceConfirmTimeoutMs} ms (driver says ${state})`,
          );
        }
        return;
      }
      case "retry":
        await this.#writeStatus(node, {
          ...status,
          phase: "new",
          message: `retry ${status.retries + 1}`,
          lastTransitionTime: now(),
        });
        return;
      case "abort":
        this.metrics.inc(METRICS.fences[0], METRICS.fences[1], { result: "aborted" });
        await this.#writeStatus(node, {
          ...status,
          step: "recovery",
          phase: "running",
          message: "node healthy again before a confirmed fence: not tainted",
          lastTransitionTime: now(),
        });
        await this.#event(
          node,
          EVENT_REASONS.fenceAborted,
          `${node} came back before the fence was confirmed; no out-of-service taint`,
        );
        return;
      case "taint":
        await addTaint(this.#options.kc, node, {
          key: OUT_OF_SERVICE_TAINT,
          value: "nodeshutdown",
          effect: "NoExecute",
        });
        await this.#writeStatus(node, {
          ...status,
          step: "taint",
          phase: "done",
          taintedAt: now(),
          message: "out-of-service taint added",
          lastTransitionTime: now(),
        });
        await this.#event(
          node,
          EVENT_REASONS.outOfServiceTainted,
          `${node} tainted ${OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute after a confirmed fence`,
        );
        return;
      case "cleanup":
        await this.#cleanup(node, status);
        return;
      case "begin-recovery": {
        if (config.powerOnAfterFence) {
          const { driver, target } = await this.#driver(node);
          if (hasPowerOn(driver)) await driver.powerOn(target);
        }
        await this.#writeStatus(node, {
          ...status,
          step: "recovery",
          phase: "running",
          message: "waiting for the node to return",
          lastTransitionTime: now(),
        });
        return;
      }
      case "finish-recovery":
        await removeTaint(this.#options.kc, node, OUT_OF_SERVICE_TAINT);
        await removeTaint(this.#options.kc, node, FENCING_TAINT);
        await this.#writeStatus(node, {
          ...status,
          step: "recovery",
          phase: "done",
          recoveredAt: now(),
          message: "node back; taints removed",
          lastTransitionTime: now(),
        });
        await this.#event(
          node,
          EVENT_REASONS.nodeRecovered,
          `${node} is back: out-of-service and fencing taints removed`,
        );
        this.#log(`${node} recovered`);
        return;
    }
  }

  async #cleanup(node: string, status: FenceStatus): Promise<void> {
    const core = this.#options.kc.makeApiClient(k8s.CoreV1Api);
    const now = new Date(this.#now()).toISOString();
    const started =
      status.step === "cleanup" && status.lastTransitionTime
        ? Date.parse(status.lastTransitionTime)
        : this.#now();
    if (status.step !== "cleanup")
      await this.#writeStatus(node, {
        ...status,
        step: "cleanup",
        phase: "running",
        lastTransitionTime: now,
      });
    const pods = await podsOnNode(this.#options.kc, node);
    for (const pod of pods) {
      await core
        .deleteNamespacedPod({
          name: pod.metadata?.name ?? "",
          namespace: pod.metadata?.namespace ?? "",
          gracePeriodSeconds: 0,
        })
        .catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
    }
    if (pods.length > 0)
      await this.#event(
        node,
        EVENT_REASONS.podsForceDeleted,
        `force-deleted ${pods.length} pod(s) of fenced node ${node}`,
      );
    const storage = this.#options.kc.makeApiClient(k8s.StorageV1Api);
    const attachments = await volumeAttachmentsOnNode(this.#options.kc, node);
    if (attachments.length > 0) {
      // The attach-detach controller detaches at once on an out-of-service node; remove what it leaves.
      if (this.#now() - started < this.#options.config.detachGraceMs) return;
      for (const va of attachments) {
        await storage.deleteVolumeAttachment({ name: va.metadata?.name ?? "" }).catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
      }
      await this.#event(
        node,
        EVENT_REASONS.volumeAttachmentsRemoved,
        `removed ${attachments.length} VolumeAttachment(s) left on fenced node ${node}`,
      );
    }
    const remaining = (await podsOnNode(this.#options.kc, node)).length;
    if (remaining > 0) return;
    const latest = (await this.#readFence(node))?.status ?? status;
    await this.#writeStatus(node, {
      ...latest,
      step: "cleanup",
      phase: "done",
      cleanedAt: now,
      message: "pods and volume attachments released",
      lastTransitionTime: now,
    });
    const detected = latest.detectedAt ? Date.parse(latest.detectedAt) : this.#now();
    this.metrics.set(METRICS.timeToRecover[0], METRICS.timeToRecover[1], (this.#now() - detected) / 1000, {
      node,
    });
  }

  async #fenceFailed(node: string, status: FenceStatus, message: string): Promise<void> {
    this.metrics.inc(METRICS.fences[0], METRICS.fences[1], { result: "failure" });
    await this.#writeStatus(node, {
      ...status,
      phase: "error",
      retries: status.retries + 1,
      message,
      lastTransitionTime: new Date(this.#now()).toISOString(),
    });
    await this.#event(node, EVENT_REASONS.fenceFailed, message, "Warning");
    this.#log(`fence of ${node} failed: ${message}`);
  }

  // --- API helpers --------------------------------------------------------------------------

  async #snapshot(): Promise<Snapshot> {
    const { kc, config } = this.#options;
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const [nodes, leases, fences, paused] = await Promise.all([
      core.listNode(),
      kc.makeApiClient(k8s.CoordinationV1Api).listNamespacedLease({ namespace: "kube-node-lease" }),
      this.#customObjects().listClusterCustomObject({
        group: NODE_FENCE_GROUP,
        version: NODE_FENCE_VERSION,
        plural: NODE_FENCE_PLURAL,
      }) as Promise<{ items: NodeFence[] }>,
      core
        .readNamespacedConfigMap({ name: config.configMapName, namespace: config.namespace })
        .then((cm) => cm.data?.["paused"] === "true")
        .catch((error: unknown) => {
          if (isNotFound(error)) return false;
          throw error;
        }),
    ]);
    return {
      nodes: nodes.items,
      leases: new Map(leases.items.map((l) => [l.metadata?.name ?? "", l])),
      fences: new Map(fences.items.map((f) => [f.spec.node, f])),
      paused,
    };
  }

  #customObjects(): k8s.CustomObjectsApi {
    return this.#options.kc.makeApiClient(k8s.CustomObjectsApi);
  }

  #ref(node: string) {
    return { group: NODE_FENCE_GROUP, version: NODE_FENCE_VERSION, plural: NODE_FENCE_PLURAL, name: node };
  }

  async #readFence(node: string): Promise<NodeFence | undefined> {
    try {
      return (await this.#customObjects().getClusterCustomObject(this.#ref(node))) as NodeFence;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Writes the whole status (merge patch); `replace` clears fields of an earlier fence first. */
  async #writeStatus(node: string, status: FenceStatus, replace = false): Promise<void> {
    const body = replace
      ? {
          status: {
            ...Object.fromEntries(
              ["fencedAt", "taintedAt", "cleanedAt", "recoveredAt"].map((k) => [k, null]),
            ),
            ...status,
          },
        }
      : { status };
    await this.#customObjects().patchClusterCustomObjectStatus(
      { ...this.#ref(node), body },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  }

  async #target(node: string): Promise<{ driver: string; target: FenceTarget }> {
    return resolveFenceTarget(
      this.#options.kc,
      this.#options.fenceConfig,
      node,
      this.#options.config.namespace,
    );
  }

  async #driver(node: string): Promise<{ driver: FenceDriver; target: FenceTarget }> {
    const { driver: name, target } = await this.#target(node);
    const driver = this.#options.drivers.get(name);
    if (!driver)
      throw new Error(
        `fence driver "${name}" is not available; available: ${[...this.#options.drivers.keys()].join(", ")}`,
      );
    return { driver, target };
  }

  /**
   * What fencing would release: the node's pods that have not ended (DaemonSet pods aside: they
   * belong to the node and tolerate its loss) plus its VolumeAttachments.
   */
  async #workloadsHeld(node: string): Promise<number> {
    const { kc } = this.#options;
    const [pods, attachments] = await Promise.all([podsOnNode(kc, node), volumeAttachmentsOnNode(kc, node)]);
    const running = pods.filter(
      (p) => !isPodTerminal(p) && p.metadata?.ownerReferences?.some((o) => o.kind === "DaemonSet") !== true,
    );
    return running.length + attachments.length;
  }

  async #stalePods(node: string): Promise<number> {
    const pods = await podsOnNode(this.#options.kc, node);
    return pods.filter((p) => p.metadata?.deletionTimestamp).length;
  }

  async #event(
    node: string,
    reason: EventReason,
    message: string,
    type: "Normal" | "Warning" = "Normal",
  ): Promise<void> {
    await recordNodeEvent(this.#options.kc, node, reason, message, type).catch((error: unknown) => {
      this.#log(`event ${reason} for ${node} not recorded: ${errorMessage(error)}`);
    });
  }
}
