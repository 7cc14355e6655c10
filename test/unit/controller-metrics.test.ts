// The controller's Prometheus metrics: the time to detect, fence and recover as histograms,
// build_info, the leader gauge, error counters by kind, per-node series removed with their node,
// the process metrics on request, and the controller feeding them from its passes (a stand-in API
// server and a fake clock).
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RecoveryController } from "../../lib/controller/controller.js";
import { DEFAULT_CONTROLLER_CONFIG } from "../../lib/controller/config.js";
import type { NodeHealth } from "../../lib/controller/detect.js";
import { fenceDriverRegistry } from "../../lib/controller/drivers/registry.js";
import { errorKind } from "../../lib/controller/error-kind.js";
import type { FenceStatus } from "../../lib/controller/fence-state.js";
import { ControllerMetrics, METRICS } from "../../lib/controller/metrics.js";
import { RekindleError } from "../../lib/errors.js";
import { k8s } from "../../lib/kube/client.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { httpGet } from "../../lib/util/http.js";
import { sleep } from "../../lib/util/time.js";
import {
  list,
  startFakeApiServer,
  status,
  WATCH_SETTLE_MS,
  type FakeApiServer,
} from "../support/fake-apiserver.js";
import { fleetLease, readyFleetRoutes } from "../support/fake-fleet.js";

const T0 = Date.parse("2026-11-24T12:00:00Z");
const iso = (ms: number): string => new Date(ms).toISOString();

function healthOf(entries: Record<string, NodeHealth["state"]>): Map<string, NodeHealth> {
  return new Map(
    Object.entries(entries).map(([name, state]) => [
      name,
      state === "healthy" ? { state } : { state, reason: "test" },
    ]),
  );
}

function fenceStatus(startedAt: number): FenceStatus {
  return {
    step: "power-management",
    phase: "running",
    retries: 0,
    detectedAt: iso(startedAt),
    fenceStarts: [iso(startedAt - 3_600_000), iso(startedAt)],
  };
}

describe("controller metrics (prom-client)", function () {
  it("says which rekindle and Node run it, and whether this replica leads", async function () {
    const metrics = new ControllerMetrics();
    const version = (
      JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string }
    ).version;
    const text = await metrics.exposition();
    expect(text).to.include(`${METRICS.buildInfo}{version="${version}",node_version="${process.version}"} 1`);
    expect(text).to.include(`${METRICS.leader} 1`);
    let leading = true;
    metrics.leaderFrom(() => leading);
    leading = false;
    expect(await metrics.value(METRICS.leader)).to.equal(0);
    leading = true;
    expect(await metrics.value(METRICS.leader)).to.equal(1);
  });

  it("times detection once per loss, from the node's last sign of life, and counts lost nodes", async function () {
    const metrics = new ControllerMetrics();
    const lastSign = new Map([["b", T0]]);
    metrics.observeNodes(healthOf({ a: "healthy", b: "unhealthy" }), T0 + 21_500, (n) => lastSign.get(n));
    metrics.observeNodes(healthOf({ a: "healthy", b: "unhealthy" }), T0 + 22_500, (n) => lastSign.get(n));
    expect(await metrics.value(`${METRICS.detectDuration}_count`)).to.equal(1);
    expect(await metrics.value(`${METRICS.detectDuration}_sum`)).to.equal(21.5);
    expect(await metrics.value(`${METRICS.detectDuration}_bucket`, { le: 20 })).to.equal(0);
    expect(await metrics.value(`${METRICS.detectDuration}_bucket`, { le: 25 })).to.equal(1);
    expect(await metrics.value(METRICS.unhealthy)).to.equal(1);
    // Back, then lost again: a second loss, timed again.
    metrics.observeNodes(healthOf({ a: "healthy", b: "healthy" }), T0 + 30_000, () => undefined);
    expect(await metrics.value(METRICS.unhealthy)).to.equal(0);
    lastSign.set("b", T0 + 30_000);
    metrics.observeNodes(healthOf({ a: "healthy", b: "unhealthy" }), T0 + 52_000, (n) => lastSign.get(n));
    expect(await metrics.value(`${METRICS.detectDuration}_count`)).to.equal(2);
    expect(await metrics.value(`${METRICS.detectDuration}_sum`)).to.equal(43.5);
  });

  it("times a fence from its start to the confirmed power-off, and recovery from the node judged lost", async function () {
    const metrics = new ControllerMetrics();
    const lostAt = T0 + 20_000;
    metrics.observeNodes(healthOf({ b: "unhealthy" }), lostAt, () => T0);
    const started = lostAt + 4_000; // the guard held it 4 s
    metrics.fenceConfirmed("b", fenceStatus(started), started + 2_500);
    expect(await metrics.value(METRICS.fences, { result: "success" })).to.equal(1);
    expect(await metrics.value(`${METRICS.fenceDuration}_sum`)).to.equal(2.5);
    expect(await metrics.value(METRICS.timeToFence, { node: "b" })).to.equal(2.5);
    metrics.cleanedUp("b", fenceStatus(started), started + 7_000);
    expect(await metrics.value(`${METRICS.recoveryDuration}_count`)).to.equal(1);
    expect(await metrics.value(`${METRICS.recoveryDuration}_sum`)).to.equal(11);
    expect(await metrics.value(METRICS.timeToRecover, { node: "b" })).to.equal(7);
  });

  it("after a restart (loss not seen by this controller), times recovery from the fence's start", async function () {
    const metrics = new ControllerMetrics();
    metrics.cleanedUp("c", fenceStatus(T0), T0 + 9_000);
    expect(await metrics.value(`${METRICS.recoveryDuration}_sum`)).to.equal(9);
  });

  it("on a standby, remembers when a node was judged lost but leaves the detection count to the leader", async function () {
    const metrics = new ControllerMetrics();
    metrics.observeNodes(healthOf({ b: "unhealthy" }), T0 + 20_000, () => T0, false);
    expect(await metrics.value(`${METRICS.detectDuration}_count`)).to.equal(0);
    expect(await metrics.value(METRICS.unhealthy)).to.equal(1);
    // It takes over: the loss is not counted late, and recovery still runs from its judgement.
    metrics.observeNodes(healthOf({ b: "unhealthy" }), T0 + 40_000, () => T0, true);
    expect(await metrics.value(`${METRICS.detectDuration}_count`)).to.equal(0);
    metrics.cleanedUp("b", fenceStatus(T0 + 45_000), T0 + 50_000);
    expect(await metrics.value(`${METRICS.recoveryDuration}_sum`)).to.equal(30);
  });

  it("removes a node's series when it leaves the cluster, and only then", async function () {
    const metrics = new ControllerMetrics();
    metrics.observeNodes(healthOf({ a: "unhealthy", b: "unhealthy" }), T0 + 20_000, () => T0);
    for (const node of ["a", "b"]) {
      metrics.fenceConfirmed(node, fenceStatus(T0 + 20_000), T0 + 21_000);
      metrics.cleanedUp(node, fenceStatus(T0 + 20_000), T0 + 25_000);
    }
    metrics.observeNodes(healthOf({ a: "unhealthy", b: "healthy" }), T0 + 26_000, () => T0);
    let text = await metrics.exposition();
    expect(text).to.include(`${METRICS.timeToFence}{node="b"}`);
    metrics.observeNodes(healthOf({ a: "unhealthy" }), T0 + 27_000, () => T0);
    text = await metrics.exposition();
    expect(text).to.not.include('node="b"');
    expect(text).to.include(`${METRICS.timeToFence}{node="a"} 1`);
    expect(text).to.include(`${METRICS.timeToRecover}{node="a"} 5`);
    // The histograms keep what they measured: a node's departure does not undo its fence.
    expect(await metrics.value(`${METRICS.fenceDuration}_count`)).to.equal(2);
    metrics.nodeGone("a");
    expect(await metrics.exposition()).to.not.include('node="a"');
  });

  it("counts API and driver errors by kind, never by message", async function () {
    const metrics = new ControllerMetrics();
    metrics.apiError(new k8s.ApiException(409, "conflict", {}, {}));
    metrics.apiError(new k8s.ApiException(409, "conflict on another object", {}, {}));
    metrics.apiError(new k8s.ApiException(503, "unavailable", {}, {}));
    metrics.apiError(
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6443"), { code: "ECONNREFUSED" }),
    );
    metrics.driverError(
      "redfish",
      new RekindleError("TIMEOUT", "the fence driver call abandoned after 10000 ms"),
    );
    metrics.driverError("redfish", new Error("HTTP 500 from the BMC"));
    expect(await metrics.value(METRICS.apiErrors, { kind: "conflict" })).to.equal(2);
    expect(await metrics.value(METRICS.apiErrors, { kind: "server_error" })).to.equal(1);
    expect(await metrics.value(METRICS.apiErrors, { kind: "network" })).to.equal(1);
    expect(await metrics.value(METRICS.driverErrors, { driver: "redfish", kind: "timeout" })).to.equal(1);
    expect(await metrics.value(METRICS.driverErrors, { driver: "redfish", kind: "other" })).to.equal(1);
  });

  it("maps errors to a fixed set of kinds", function () {
    expect(errorKind(new k8s.ApiException(404, "", {}, {}))).to.equal("not_found");
    expect(errorKind(new k8s.ApiException(429, "", {}, {}))).to.equal("throttled");
    expect(errorKind(new k8s.ApiException(418, "", {}, {}))).to.equal("client_error");
    expect(errorKind(new RekindleError("ABORTED", "stopped"))).to.equal("aborted");
    const wrapped = new Error("request failed", {
      cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }),
    });
    expect(errorKind(wrapped)).to.equal("network");
    expect(errorKind("a string")).to.equal("other");
  });

  it("adds the process metrics, event-loop lag included, only when asked", async function () {
    const bare = await new ControllerMetrics().exposition();
    expect(bare).to.not.include("nodejs_eventloop_lag_seconds");
    const full = await new ControllerMetrics({ processMetrics: true }).exposition();
    expect(full)
      .to.include("# TYPE nodejs_eventloop_lag_seconds gauge")
      .and.include("nodejs_eventloop_lag_p99_seconds")
      .and.include("process_cpu_seconds_total")
      .and.include("process_resident_memory_bytes");
  });

  it("serves the registry on /metrics with Prometheus's content type", async function () {
    const metrics = new ControllerMetrics();
    metrics.fenceResult("aborted");
    const { server, port } = await metrics.serve({ port: 0 });
    try {
      const answer = await httpGet(`http://127.0.0.1:${port}/metrics`);
      expect(answer.status).to.equal(200);
      expect(answer.body).to.include(`${METRICS.fences}{result="aborted"} 1`);
      expect((await httpGet(`http://127.0.0.1:${port}/other`)).status).to.equal(404);
    } finally {
      server.close();
    }
  });
});

describe("the controller feeds its metrics from its passes", function () {
  let api: FakeApiServer;
  let now = T0;
  let nodes = ["a", "b", "c"];
  const renewed = new Map<string, number>();

  before(async function () {
    const lease = (name: string) => fleetLease(name, renewed.get(name) ?? T0);
    api = await startFakeApiServer({
      ...readyFleetRoutes(() => nodes, lease),
      "GET /apis/rekindle.dev/v1alpha1/nodefences": () => list("NodeFenceList", []),
      "GET /api/v1/namespaces/rekindle-system/configmaps": () => list("ConfigMapList", []),
      // What node b holds cannot be read: the API server fails.
      "GET /api/v1/pods": () => status(500, "InternalError", "etcd timed out"),
      "GET /apis/storage.k8s.io/v1/volumeattachments": () => list("VolumeAttachmentList", []),
    });
  });

  after(async function () {
    await api.close();
  });

  it("times b's detection, counts the failed read of what it holds, and forgets it once deleted", async function () {
    const controller = new RecoveryController({
      kc: api.kc,
      // The fake clock jumps 10 s between passes: no watch may look stale for it.
      config: {
        ...DEFAULT_CONTROLLER_CONFIG,
        identity: "test",
        maxUnhealthy: "2",
        watchStaleAfterMs: 3_600_000,
      },
      fenceConfig: { templates: {} },
      drivers: fenceDriverRegistry([]),
      now: () => now,
    });
    const pass = async (at: number, renewing: string[]) => {
      now = at;
      for (const name of renewing) renewed.set(name, at);
      // Long enough for the stand-in API server's watches to carry the change.
      await sleep(WATCH_SETTLE_MS);
      await controller.reconcileOnce();
    };
    await pass(T0, []);
    await pass(T0 + 1_000, ["a", "b", "c"]); // all seen renewing: b's last sign at T0 + 1 s
    await pass(T0 + 11_000, ["a", "c"]);
    await pass(T0 + 21_000, ["a", "c"]);
    expect(await controller.metrics.value(METRICS.unhealthy)).to.equal(0);
    await pass(T0 + 22_000, ["a", "c"]);
    expect(await controller.metrics.value(METRICS.unhealthy)).to.equal(1);
    expect(await controller.metrics.value(`${METRICS.detectDuration}_sum`)).to.equal(21);
    expect(await controller.metrics.value(METRICS.apiErrors, { kind: "server_error" })).to.equal(1);
    nodes = ["a", "c"];
    await pass(T0 + 23_000, ["a", "c"]);
    expect(await controller.metrics.value(METRICS.unhealthy)).to.equal(0);
    expect(await controller.metrics.value(`${METRICS.detectDuration}_count`)).to.equal(1);
    expect(await controller.metrics.value(METRICS.leader)).to.equal(1);
    await controller.stop();
  });
});
