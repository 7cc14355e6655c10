// No mass power-off, through the controller's loop: against a stand-in API server on a fake clock,
// two nodes of a zone that go silent together are held with an Event each until
// node-monitor-grace-period, then only one starts at the secondary rate; a node lost alone goes
// straight to its fence.
import { expect } from "chai";
import type { IncomingMessage } from "node:http";
import { RecoveryController } from "../../lib/controller/controller.js";
import { DEFAULT_CONTROLLER_CONFIG } from "../../lib/controller/config.js";
import { fenceDriverRegistry } from "../../lib/controller/drivers/registry.js";
import { EVENT_REASONS } from "../../lib/controller/events.js";
import { sleep } from "../../lib/util/time.js";
import { list, startFakeApiServer, WATCH_SETTLE_MS, type FakeApiServer } from "../support/fake-apiserver.js";

/** Long enough for the stand-in API server's watches to carry a change to the controller's caches. */
const settle = () => sleep(WATCH_SETTLE_MS);

const T0 = Date.parse("2026-11-24T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();
const NODES = ["a", "b", "c"];

describe("controller: nodes silent together, held with an Event (no mass power-off)", function () {
  let api: FakeApiServer;
  let now = T0;
  const renewed = new Map<string, number>();
  /** [node, reason] of every Event the controller posted. */
  const events: [string, string][] = [];

  const lease = (name: string) => ({
    metadata: { name, namespace: "kube-node-lease" },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: iso(renewed.get(name) ?? T0) },
  });
  const recordEvent = (req: IncomingMessage) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      const body = JSON.parse(text) as { involvedObject?: { name?: string }; reason?: string };
      events.push([body.involvedObject?.name ?? "", body.reason ?? ""]);
    });
    return { status: 201, body: {} };
  };

  before(async function () {
    const routes: Parameters<typeof startFakeApiServer>[0] = {
      "GET /api/v1/nodes": () =>
        list(
          "NodeList",
          NODES.map((name) => ({
            metadata: { name, uid: `uid-${name}`, labels: { "topology.kubernetes.io/zone": "z" } },
            status: { conditions: [{ type: "Ready", status: "True" }] },
          })),
        ),
      "GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases": () =>
        list("LeaseList", NODES.map(lease)),
      "GET /apis/rekindle.dev/v1alpha1/nodefences": () => list("NodeFenceList", []),
      "GET /api/v1/namespaces/rekindle-system/configmaps": () => list("ConfigMapList", []),
      // Every node holds a pod, so nothing but the hold keeps a lost node from its fence.
      "GET /api/v1/pods": () =>
        list("PodList", [{ metadata: { name: "p", namespace: "ns" }, spec: { nodeName: "a" } }]),
      "GET /apis/storage.k8s.io/v1/volumeattachments": () => list("VolumeAttachmentList", []),
      "POST /api/v1/namespaces/default/events": recordEvent,
    };
    for (const name of NODES) {
      routes[`GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`] = () => ({
        body: lease(name),
      });
    }
    api = await startFakeApiServer(routes);
  });

  after(async function () {
    await api.close();
  });

  // A test that fails before its own stop() must not leave watches open: mocha would never exit.
  const started: RecoveryController[] = [];
  afterEach(async function () {
    await Promise.all(started.splice(0).map((c) => c.stop()));
  });

  /** A controller that saw every node renew at T0 + 1 s; `silent` never again, the rest every 10 s until `until`. */
  async function watched(silent: readonly string[], until: number, logs: string[]) {
    now = T0;
    renewed.clear();
    events.length = 0;
    const controller = new RecoveryController({
      kc: api.kc,
      config: {
        ...DEFAULT_CONTROLLER_CONFIG,
        identity: "test",
        maxUnhealthy: "100%",
        unhealthyAfterMs: 20_000,
        nodeMonitorGracePeriodMs: 50_000,
        // The fake clock jumps between passes: no watch may look stale for it.
        watchStaleAfterMs: 3_600_000,
      },
      fenceConfig: { templates: { node: { driver: "test" } }, defaultTemplate: "node" },
      drivers: fenceDriverRegistry([
        { name: "test", powerOff: () => Promise.resolve(), powerState: () => Promise.resolve("on") },
      ]),
      now: () => now,
      log: (line) => logs.push(line),
    });
    started.push(controller);
    await controller.reconcileOnce();
    for (let t = T0 + 1_000; t <= until; t += 1_000) {
      now = t;
      if ((t - T0 - 1_000) % 10_000 === 0) {
        for (const name of NODES) if (t === T0 + 1_000 || !silent.includes(name)) renewed.set(name, t);
        await settle();
      }
      await controller.reconcileOnce();
    }
    return controller;
  }

  const eventsOf = (reason: string) => events.filter(([, r]) => r === reason).map(([node]) => node);
  /** The stand-in answers an Event before it has read its body: let the bodies arrive. */
  const settled = () => sleep(100);

  it("holds both until the grace period, with one Event each, then lets one through at the secondary rate", async function () {
    const logs: string[] = [];
    const controller = await watched(["a", "b"], T0 + 30_000, logs);
    await settled();
    expect(eventsOf(EVENT_REASONS.correlatedSilenceHeld).sort()).to.deep.equal(["a", "b"]);
    expect(
      logs.some((l) => l.includes("fencing it releases them")),
      logs.join("\n"),
    ).to.equal(false);
    // At 1 s + 50 s: one starts (it got the secondary token), the other waits for the next one. (The
    // stand-in API answers no NodeFence writes, so the pass after would try the first again.)
    for (let t = T0 + 31_000; t <= T0 + 51_000; t += 1_000) {
      now = t;
      if ((t - T0 - 1_000) % 10_000 === 0) {
        renewed.set("c", t);
        await settle();
      }
      await controller.reconcileOnce();
    }
    await settled();
    const started = logs.filter((l) => l.includes("fencing it releases them"));
    expect(started, logs.join("\n")).to.have.length(1);
    expect(eventsOf(EVENT_REASONS.fleetRateHeld), logs.join("\n")).to.have.length(1);
    expect(eventsOf(EVENT_REASONS.correlatedSilenceHeld), "one Event per hold, not per pass").to.have.length(
      2,
    );
    await controller.stop();
  });

  it("a node lost alone is not held: its fence starts after unhealthyAfter", async function () {
    const logs: string[] = [];
    const controller = await watched(["a"], T0 + 23_000, logs);
    await settled();
    expect(eventsOf(EVENT_REASONS.correlatedSilenceHeld)).to.deep.equal([]);
    expect(
      logs.filter((l) => l.startsWith("a holds") && l.includes("fencing it releases them")),
    ).to.have.length(1);
    await controller.stop();
  });
});
