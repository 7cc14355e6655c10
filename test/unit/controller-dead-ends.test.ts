// No fence state is a dead end (issue 25, item 3): the steps that leave a fence early read the
// power state first, a recovery that never completes is re-evaluated, and every power action of a
// fence under way (and the first step of one made by hand) passes the guard. The steps run against
// a stand-in store, driver and clock; the Kubernetes API is never reached on these paths.
import { expect } from "chai";
import { progressFence, type PowerGuard } from "../../lib/controller/actions.js";
import type { ActionContext } from "../../lib/controller/action-context.js";
import { DEFAULT_CONTROLLER_CONFIG, type ControllerConfig } from "../../lib/controller/config.js";
import type { FenceDriver, PowerState } from "../../lib/controller/drivers/types.js";
import { decide, type FenceStatus, type NodeFence } from "../../lib/controller/fence-state.js";
import { ControllerMetrics } from "../../lib/controller/metrics.js";
import type { NodeFenceStore } from "../../lib/controller/node-fence-store.js";
import { k8s } from "../../lib/kube/client.js";
import { reevaluate } from "../../lib/controller/returns.js";
import { boundedSignal } from "../../lib/util/abort.js";

const T = Date.parse("2026-11-24T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

interface Stage {
  context: ActionContext;
  writes: FenceStatus[];
  events: string[];
  driverCalls: string[];
  clock: { now: number };
}

/** A context whose driver reports `power`, whose store records status writes, on a fake clock. */
function stage(power: PowerState, config: Partial<ControllerConfig> = {}): Stage {
  const writes: FenceStatus[] = [];
  const events: string[] = [];
  const driverCalls: string[] = [];
  const clock = { now: T };
  const driver: FenceDriver = {
    name: "fake",
    powerOff: () => {
      driverCalls.push("powerOff");
      return Promise.resolve();
    },
    powerState: () => {
      driverCalls.push("powerState");
      return Promise.resolve(power);
    },
  };
  const store = {
    writeStatus: (fence: NodeFence, status: FenceStatus) => {
      writes.push(status);
      fence.status = status;
      return Promise.resolve();
    },
  } as unknown as NodeFenceStore;
  const running = new AbortController();
  const context: ActionContext = {
    kc: new k8s.KubeConfig(),
    reads: { podsOnNode: () => Promise.resolve([]), volumeAttachmentsOnNode: () => Promise.resolve([]) },
    config: { ...DEFAULT_CONTROLLER_CONFIG, identity: "test", ...config },
    store,
    metrics: new ControllerMetrics(),
    now: () => clock.now,
    log: () => undefined,
    event: (_node, reason) => {
      events.push(reason);
      return Promise.resolve();
    },
    driver: (node) => Promise.resolve({ driver, target: { node, options: {}, credentials: {} } }),
    acting: () => running.signal,
    driverSignal: () => boundedSignal(running.signal, 1_000, "the fake driver call"),
    // Lost right now for every side effect (controller-present.test.ts tests the re-read itself).
    lostNow: () => Promise.resolve({ lost: true, reason: "the test's node stays lost" }),
  };
  return { context, writes, events, driverCalls, clock };
}

function fence(status?: Partial<FenceStatus>): NodeFence {
  return {
    apiVersion: "rekindle.dev/v1alpha1",
    kind: "NodeFence",
    metadata: { name: "worker-1" },
    spec: { node: "worker-1" },
    ...(status
      ? {
          status: {
            step: "power-management",
            phase: "running",
            retries: 0,
            lastTransitionTime: iso(T - 1_000),
            ...status,
          },
        }
      : {}),
  };
}

const healthy = { health: "healthy", healthyForMs: 1_000 } as const;
const lost = { health: "unhealthy", healthyForMs: 0 } as const;

describe("controller: no dead ends", function () {
  describe("a node that renews before its power-off is confirmed (abort)", function () {
    it("is fenced on if its driver reports it off: confirmed now, never aborted", async function () {
      const s = stage("off");
      const f = fence({ phase: "running" });
      expect(await progressFence(s.context, f, healthy)).to.equal("abort");
      expect(s.writes.at(-1)).to.deep.include({ step: "power-management", phase: "done", fencedAt: iso(T) });
      expect(s.events).to.deep.equal(["FenceSucceeded"]);
      // Still seen alive a moment later (that renewal was before the power-off): the fence stays.
      s.clock.now = T + 5_000;
      expect(await progressFence(s.context, f, healthy)).to.equal("abandon");
      expect(f.status).to.deep.include({ step: "power-management", phase: "done" });
      expect(s.events).to.deep.equal(["FenceSucceeded"]);
      // Judged lost at last: the taint is next.
      const observed = { ...lost, stalePods: 0, nowMs: s.clock.now };
      expect(f.status && decide(f.status, observed, s.context.config)).to.equal("taint");
    });

    it("recovers if its driver reports it on, or cannot say", async function () {
      for (const power of ["on", "unknown"] as const) {
        const s = stage(power);
        expect(await progressFence(s.context, fence({ phase: "new" }), healthy)).to.equal("abort");
        expect(s.writes.at(-1), power).to.deep.include({ step: "recovery", phase: "running" });
        expect(s.writes.at(-1)?.message, power).to.include(power === "on" ? "power on" : "unknown");
        expect(s.events, power).to.deep.equal(["FenceAborted"]);
      }
    });
  });

  it("abandons a node alive long after its confirmed power-off even if the driver says off", async function () {
    const s = stage("off");
    const c = s.context.config;
    s.clock.now = T + c.unhealthyAfterMs + 2 * c.checkIntervalMs + 1;
    const f = fence({ phase: "done", fencedAt: iso(T) });
    expect(await progressFence(s.context, f, healthy)).to.equal("abandon");
    expect(f.status).to.deep.include({ step: "recovery", phase: "running" });
    expect(s.events).to.deep.equal(["FenceAbandoned"]);
    expect(s.driverCalls).to.deep.equal([]);
  });

  it("re-evaluates a recovery that never completes: lost, off, never released → on to the taint", async function () {
    const s = stage("off");
    const f = fence({ step: "recovery", phase: "running", lastTransitionTime: iso(T) });
    const recovering: FenceStatus = {
      step: "recovery",
      phase: "running",
      retries: 0,
      lastTransitionTime: iso(T),
    };
    const at = (ms: number) => ({ ...lost, stalePods: 0, nowMs: T + ms });
    const { recoveryTimeoutMs } = s.context.config;
    expect(decide(recovering, at(recoveryTimeoutMs - 1), s.context.config)).to.equal("wait");
    expect(decide(recovering, at(recoveryTimeoutMs), s.context.config)).to.equal("reevaluate");
    // (progressFence would count the node's stale pods in the API first: the step itself here.)
    s.clock.now = T + recoveryTimeoutMs;
    await reevaluate(s.context, f, recovering, lost);
    expect(f.status).to.deep.include({ step: "power-management", phase: "done", fencedAt: iso(s.clock.now) });
    expect(s.events).to.deep.equal(["FenceResumed"]);
  });

  describe("the guard before power actions", function () {
    const paused = (calls: string[]): PowerGuard => ({
      decide: () => ({ allowed: false, reason: "Paused", message: "the controller is paused" }),
      held: (reason) => {
        calls.push(reason);
      },
    });

    it("holds the retry of a fence in error while paused, and says so in the NodeFence", async function () {
      const s = stage("on");
      const held: string[] = [];
      const f = fence({ phase: "error", retries: 5, lastTransitionTime: iso(T - 3_600_000) });
      expect(await progressFence(s.context, f, lost, undefined, paused(held))).to.equal("wait");
      expect(held).to.deep.equal(["Paused"]);
      expect(f.status).to.deep.include({ phase: "error", retries: 5 });
      expect(f.status?.message).to.include("held by the guard before retry (Paused)");
      expect(s.driverCalls).to.deep.equal([]);
      // Allowed again: retried.
      expect(await progressFence(s.context, f, lost)).to.equal("retry");
    });

    it("lets a started fence's power-off through the budgets (checked at its start), not a paused one", async function () {
      const s = stage("on");
      const held: string[] = [];
      const overBudget: PowerGuard = {
        decide: () => ({ allowed: false, reason: "ZoneBudget", message: "2 of 3 nodes in zone a" }),
        held: (reason) => {
          held.push(reason);
        },
      };
      const f = fence({ phase: "new" });
      expect(await progressFence(s.context, f, lost, undefined, overBudget)).to.equal("power-off");
      expect(s.driverCalls).to.deep.equal(["powerOff"]);
      // A NodeFence made by hand never passed the budgets: it waits for them.
      const byHand = fence();
      expect(await progressFence(s.context, byHand, lost, undefined, overBudget)).to.equal("wait");
      expect(held).to.deep.equal(["ZoneBudget"]);
    });

    it("starts a NodeFence made by hand only when the guard allows, whatever it would do first", async function () {
      for (const observation of [healthy, lost]) {
        const s = stage("off");
        const held: string[] = [];
        const f = fence();
        expect(await progressFence(s.context, f, observation, undefined, paused(held))).to.equal("wait");
        expect(held).to.deep.equal(["Paused"]);
        expect(s.driverCalls).to.deep.equal([]);
        // A second pass: still held (the hold's own status write does not start it).
        expect(await progressFence(s.context, f, observation, undefined, paused(held))).to.equal("wait");
        expect(s.driverCalls).to.deep.equal([]);
        expect(f.status).to.deep.include({ step: "power-management", phase: "new" });
      }
    });
  });
});
