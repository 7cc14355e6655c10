// Decisions made on the present (issue 25 item 2): a side effect re-reads its node right before it
// acts, nodes are handled in parallel with bounded concurrency, and a pass has a bounded duration.
// The controller runs against a stand-in API server on a fake clock, with a fence driver whose
// power-off of node a hangs.
import { expect } from "chai";
import { RecoveryController } from "../../lib/controller/controller.js";
import { DEFAULT_CONTROLLER_CONFIG, type ControllerConfig } from "../../lib/controller/config.js";
import { fenceDriverRegistry } from "../../lib/controller/drivers/registry.js";
import type { FenceDriver } from "../../lib/controller/drivers/types.js";
import type { NodeFence } from "../../lib/controller/fence-state.js";
import type { NodeObservation } from "../../lib/controller/observations.js";
import { lostNow, type CurrentNode } from "../../lib/controller/present.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import { list, startFakeApiServer, WATCH_SETTLE_MS, type FakeApiServer } from "../support/fake-apiserver.js";
import { fleetLease, readyFleetRoutes } from "../support/fake-fleet.js";

const T0 = Date.parse("2026-11-24T12:00:00Z");
/** Long enough for the stand-in API server's watches to carry a change to the controller's caches. */
const settle = () => sleep(WATCH_SETTLE_MS);
const iso = (ms: number) => new Date(ms).toISOString();

describe("controller: a side effect acts only on a node lost right now", function () {
  const observation = (over: Partial<NodeObservation> = {}): NodeObservation => ({
    uid: "uid-a",
    renewTime: iso(T0),
    lastSignAt: 1_000,
    seenRenewing: true,
    renewIntervalMs: 10_000,
    ready: "True",
    notReadySinceAt: undefined,
    ...over,
  });
  const check = (current: CurrentNode | undefined | Error, obs = observation(), now = 30_000) =>
    lostNow("a", {
      read: () => (current instanceof Error ? Promise.reject(current) : Promise.resolve(current)),
      observation: obs,
      now: () => now,
      unhealthyAfterMs: 20_000,
    });

  it("a node whose Lease is as the pass read it, silent past unhealthyAfter, is lost", async function () {
    expect(await check({ renewTime: iso(T0) })).to.deep.equal({
      lost: true,
      reason: "Lease not renewed for 29s",
    });
  });

  it("a node that renewed since the pass read it is not", async function () {
    const answer = await check({ renewTime: iso(T0 + 10_000) });
    expect(answer).to.deep.equal({ lost: false, why: "it renewed its Lease since this pass read it" });
  });

  it("a node that cannot be read now, or is gone, is not known lost", async function () {
    expect(await check(new Error("connection refused"))).to.deep.equal({
      lost: false,
      why: "its state could not be read now (connection refused)",
    });
    expect((await check(undefined)).lost).to.equal(false);
    expect(
      (
        await lostNow("a", {
          read: () => Promise.resolve({ renewTime: iso(T0) }),
          observation: undefined,
          now: () => 30_000,
          unhealthyAfterMs: 20_000,
        })
      ).lost,
    ).to.equal(false);
  });

  it("the silence is counted to the read's start, on the controller's clock, not past unhealthyAfter yet", async function () {
    expect(await check({ renewTime: iso(T0) }, observation(), 21_000)).to.deep.equal({
      lost: false,
      why: "it is healthy now",
    });
  });

  it("a node without a Lease is lost while not Ready, and not once Ready again", async function () {
    const noLease = observation({ renewTime: undefined, ready: "False", notReadySinceAt: 1_000 });
    expect((await check({ renewTime: undefined, ready: "False" }, noLease)).lost).to.equal(true);
    expect(await check({ renewTime: undefined, ready: "True" }, noLease)).to.deep.equal({
      lost: false,
      why: "it is Ready again",
    });
  });
});

describe("controller: one pass, decided on the present", function () {
  let api: FakeApiServer;
  let now = T0;
  const renewed = new Map<string, number>();
  let fences: NodeFence[] = [];
  const nodes = ["a", "b", "c"];

  const lease = (name: string) => fleetLease(name, renewed.get(name) ?? T0);
  const fence = (name: string): NodeFence => ({
    apiVersion: "rekindle.dev/v1alpha1",
    kind: "NodeFence",
    metadata: { name, resourceVersion: "1" },
    spec: { node: name, nodeUID: `uid-${name}`, driver: "test" },
    status: { step: "power-management", phase: "new", retries: 0, lastTransitionTime: iso(T0) },
  });

  before(async function () {
    const routes: Parameters<typeof startFakeApiServer>[0] = {
      ...readyFleetRoutes(() => nodes, lease),
      "GET /apis/rekindle.dev/v1alpha1/nodefences": () => list("NodeFenceList", fences),
      "GET /apis/storage.k8s.io/v1/volumeattachments": () => list("VolumeAttachmentList", []),
      "GET /api/v1/namespaces/rekindle-system/configmaps": () => list("ConfigMapList", []),
    };
    for (const name of nodes) {
      routes[`GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`] = () => ({
        body: lease(name),
      });
      routes[`PATCH /apis/rekindle.dev/v1alpha1/nodefences/${name}/status`] = () => ({ body: fence(name) });
    }
    api = await startFakeApiServer(routes);
  });

  after(async function () {
    await api.close();
  });

  beforeEach(function () {
    now = T0;
    renewed.clear();
    fences = [];
  });

  /** A driver whose power-off of a hangs, ignoring its signal, until released; the calls it got. */
  function hangingDriver() {
    const calls: string[] = [];
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const driver: FenceDriver = {
      name: "test",
      async powerOff(target) {
        calls.push(target.node);
        if (target.node === "a") {
          await released;
          throw new Error("the BMC never answered");
        }
      },
      powerState: () => Promise.resolve("on"),
    };
    return { driver, calls, release };
  }

  /** A controller that has seen a, b and c renew, then a and b fall silent past unhealthyAfter, both fences at power-off. */
  async function lostPair(driver: FenceDriver, config: Partial<ControllerConfig>, logs: string[]) {
    const controller = new RecoveryController({
      kc: api.kc,
      // The fake clock jumps 10 s between passes: no watch may look stale for it.
      config: { ...DEFAULT_CONTROLLER_CONFIG, identity: "test", watchStaleAfterMs: 3_600_000, ...config },
      fenceConfig: { templates: { node: { driver: "test" } }, defaultTemplate: "node" },
      drivers: fenceDriverRegistry([driver]),
      now: () => now,
      log: (line) => logs.push(line),
    });
    await controller.reconcileOnce();
    now = T0 + 1_000;
    for (const name of nodes) renewed.set(name, now);
    await settle();
    await controller.reconcileOnce();
    // c renews on its cadence: a late renewal would give the nodes silent with it a fresh chance.
    for (const at of [T0 + 11_000, T0 + 22_000]) {
      now = at;
      renewed.set("c", now);
      await settle();
      if (at < T0 + 22_000) await controller.reconcileOnce();
    }
    fences = [fence("a"), fence("b")];
    await settle();
    return controller;
  }

  it("a node that renews while another's power-off hangs is not powered off on the pass's old verdict", async function () {
    const { driver, calls, release } = hangingDriver();
    const logs: string[] = [];
    const controller = await lostPair(driver, { nodeConcurrency: 1 }, logs);
    const pass = controller.reconcileOnce();
    await pollUntil(() => Promise.resolve(calls.includes("a") ? true : undefined), {
      what: "the power-off of a",
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    renewed.set("b", T0 + 22_500);
    await settle();
    release();
    await pass;
    expect(calls).to.deep.equal(["a"]);
    expect(logs).to.include("b: no power-off now: it renewed its Lease since this pass read it");
    await controller.stop();
  });

  it("a hanging power-off holds up only its own slot: the next node is powered off meanwhile", async function () {
    const { driver, calls, release } = hangingDriver();
    const controller = await lostPair(driver, { nodeConcurrency: 2 }, []);
    const pass = controller.reconcileOnce();
    await pollUntil(() => Promise.resolve(calls.includes("b") ? true : undefined), {
      what: "the power-off of b while a's hangs",
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    expect(calls).to.have.members(["a", "b"]);
    release();
    await pass;
    await controller.stop();
  });

  it("a fence's hanging steps hold up no pass: the passes beside them decide for the other nodes", async function () {
    const { driver, calls, release } = hangingDriver();
    const logs: string[] = [];
    const controller = await lostPair(driver, { nodeConcurrency: 1 }, logs);
    // c falls silent too: a decision for it can only come from a pass run while a's steps hang.
    now = T0 + 43_000;
    controller.start();
    // The pass that starts a's steps and the one that decides for c run side by side: either may
    // come first, so wait for both before looking at what b got.
    await pollUntil(
      () =>
        Promise.resolve(calls.includes("a") && logs.some((l) => l.startsWith("holds c:")) ? true : undefined),
      { what: "the power-off of a and a decision for c while it hangs", timeoutMs: 5_000, intervalMs: 10 },
    );
    // b's steps wait for the one slot a's hold (nodeConcurrency 1).
    expect(calls).to.deep.equal(["a"]);
    release();
    await pollUntil(() => Promise.resolve(calls.includes("b") ? true : undefined), {
      what: "the power-off of b once a's slot is free",
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    await controller.stop();
  });

  it("a fence's steps end at passTimeout, abandoning what still hangs", async function () {
    const { driver, release } = hangingDriver();
    const logs: string[] = [];
    const controller = await lostPair(
      driver,
      { nodeConcurrency: 1, passTimeoutMs: 300, driverTimeoutMs: 60_000 },
      logs,
    );
    const started = performance.now();
    await controller.reconcileOnce();
    const took = performance.now() - started;
    release();
    expect(took).to.be.within(250, 2_000);
    expect(
      logs.some((line) => line.startsWith("node a:") && line.includes("abandoned after 300 ms")),
    ).to.equal(true, logs.join("\n"));
    await controller.stop();
  });
});
