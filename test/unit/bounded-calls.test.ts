// Bounds on the controller's calls and passes: API calls end at their timeout or with their signal,
// bounded parallelism keeps a hanging task in its own slot, a pass's timeouts end before a
// standby could take over, and the clocks are monotonic where durations are measured.
import { expect } from "chai";
import { PassBounds } from "../../lib/controller/pass-bounds.js";
import { LeaderElector } from "../../lib/controller/leader.js";
import { DEFAULT_CONTROLLER_CONFIG } from "../../lib/controller/config.js";
import { controllerSettings, parseControllerFlags } from "../../lib/controller/flags.js";
import { RekindleError } from "../../lib/errors.js";
import { boundedKubeConfig } from "../../lib/kube/bounded-client.js";
import { k8s } from "../../lib/kube/client.js";
import { forEachBounded } from "../../lib/util/bounded-parallel.js";
import { clockFrom, SYSTEM_CLOCK } from "../../lib/util/clock.js";
import { sleep } from "../../lib/util/time.js";
import { startFakeApiServer, type FakeApiServer } from "../support/fake-apiserver.js";

describe("bounded API calls", function () {
  let api: FakeApiServer;
  before(async function () {
    api = await startFakeApiServer({
      // A hung API server: the request is taken and never answered.
      "GET /api/v1/nodes": () => undefined,
      "GET /api/v1/nodes/a": () => ({ body: { metadata: { name: "a" } } }),
      "GET /apis/coordination.k8s.io/v1/namespaces/hung/leases/rekindle-controller": () => undefined,
    });
  });
  after(async function () {
    await api.close();
  });

  it("ends a request the API server never answers at its timeout, saying so", async function () {
    const kc = boundedKubeConfig(api.kc, {
      timeoutMs: () => 200,
      signal: () => new AbortController().signal,
    });
    const started = performance.now();
    const error: unknown = await kc
      .makeApiClient(k8s.CoreV1Api)
      .listNode()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(performance.now() - started).to.be.within(150, 2_000);
    expect(error).to.be.instanceOf(RekindleError);
    expect((error as RekindleError).code).to.equal("TIMEOUT");
    expect((error as Error).message).to.match(/GET .*\/api\/v1\/nodes abandoned after 200 ms/);
  });

  it("ends it at once when its signal aborts, with the signal's reason", async function () {
    const stop = new AbortController();
    const kc = boundedKubeConfig(api.kc, { timeoutMs: () => 60_000, signal: () => stop.signal });
    const call = kc.makeApiClient(k8s.CoreV1Api).listNode();
    setTimeout(() => {
      stop.abort(new Error("controller stopped"));
    }, 50);
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).to.equal("controller stopped");
  });

  it("ends the leader election's own calls within its retry period", async function () {
    const elector = new LeaderElector({
      kc: api.kc,
      namespace: "hung",
      identity: "a",
      leaseDurationMs: 1_500,
      retryPeriodMs: 300,
    });
    const started = performance.now();
    expect(await elector.tryAcquireOrRenew()).to.equal(false);
    expect(performance.now() - started).to.be.within(250, 2_000);
  });

  it("answers as the plain client does, and is the same KubeConfig otherwise", async function () {
    const kc = boundedKubeConfig(api.kc, {
      timeoutMs: () => 1_000,
      signal: () => new AbortController().signal,
    });
    expect((await kc.makeApiClient(k8s.CoreV1Api).readNode({ name: "a" })).metadata?.name).to.equal("a");
    expect(kc.getCurrentCluster()?.server).to.equal(api.url);
    expect(kc).to.be.instanceOf(k8s.KubeConfig);
  });
});

describe("bounded parallelism", function () {
  it("runs at most `limit` tasks at once, and a hanging one holds only its own slot", async function () {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    let release: () => void = () => undefined;
    const hung = new Promise<void>((resolve) => {
      release = resolve;
    });
    const all = forEachBounded([0, 1, 2, 3, 4, 5], 2, async (i) => {
      running += 1;
      most = Math.max(most, running);
      await (i === 0 ? hung : sleep(5));
      running -= 1;
      done.push(i);
    });
    await sleep(100);
    expect(done).to.deep.equal([1, 2, 3, 4, 5]);
    release();
    await all;
    expect(most).to.equal(2);
    expect(done).to.have.length(6);
  });

  it("a task that throws does not stop the others; the first error is thrown at the end", async function () {
    const done: number[] = [];
    const error = await forEachBounded([0, 1, 2], 1, (i) => {
      if (i === 0) return Promise.reject(new Error("first"));
      done.push(i);
      return Promise.resolve();
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).to.equal("first");
    expect(done).to.deep.equal([1, 2]);
  });
});

describe("a pass's bounds", function () {
  const config = {
    ...DEFAULT_CONTROLLER_CONFIG,
    apiTimeoutMs: 10_000,
    driverTimeoutMs: 10_000,
    passTimeoutMs: 30_000,
  };

  it("cuts each call's timeout to what is left of the pass", function () {
    let now = 0;
    const bounds = new PassBounds({ config, now: () => now, stopped: new AbortController().signal });
    expect(bounds.apiTimeoutMs()).to.equal(10_000);
    bounds.begin();
    now = 25_000;
    expect(bounds.apiTimeoutMs()).to.equal(5_000);
    expect(bounds.driverTimeoutMs()).to.equal(5_000);
    bounds.end();
    expect(bounds.remainingMs()).to.equal(Infinity);
  });

  it("cuts a leader's calls to end before a standby could take over; a standby's reads are not cut", function () {
    const leader = { isLeader: true, safeActionMs: () => 4_000 } as unknown as LeaderElector;
    const bounds = new PassBounds({ config, leader, now: () => 0, stopped: new AbortController().signal });
    expect(bounds.apiTimeoutMs()).to.equal(4_000);
    expect(bounds.driverTimeoutMs()).to.equal(4_000);
    const standby = { isLeader: false, safeActionMs: () => 0 } as unknown as LeaderElector;
    const standbyBounds = new PassBounds({
      config,
      leader: standby,
      now: () => 0,
      stopped: new AbortController().signal,
    });
    expect(standbyBounds.apiTimeoutMs()).to.equal(10_000);
  });

  it("lets every call of a pass listen to its signal without Node's listener-leak warning", async function () {
    const bounds = new PassBounds({ config, now: () => 0, stopped: new AbortController().signal });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      bounds.begin();
      const listeners = Array.from({ length: 40 }, () => () => undefined);
      for (const l of listeners) bounds.signal.addEventListener("abort", l);
      // Warnings are emitted on the next tick.
      await sleep(10);
      for (const l of listeners) bounds.signal.removeEventListener("abort", l);
    } finally {
      process.off("warning", onWarning);
      bounds.end();
    }
    expect(warnings).to.not.include("MaxListenersExceededWarning");
  });

  it("aborts the pass's signal at its deadline, or when the controller stops", async function () {
    const stop = new AbortController();
    const bounds = new PassBounds({
      config: { ...config, passTimeoutMs: 50 },
      now: SYSTEM_CLOCK.monotonicMs,
      stopped: stop.signal,
    });
    bounds.begin();
    const first = bounds.signal;
    await sleep(100);
    expect(first.aborted).to.equal(true);
    expect(String(first.reason)).to.include("50 ms bound");
    bounds.begin();
    stop.abort(new Error("controller stopped"));
    expect(bounds.signal.aborted).to.equal(true);
    bounds.end();
  });
});

describe("the controller's clocks", function () {
  it("measures durations on a monotonic clock and stamps with the wall clock", function () {
    const a = SYSTEM_CLOCK.monotonicMs();
    const b = SYSTEM_CLOCK.monotonicMs();
    expect(b).to.be.at.least(a);
    expect(Math.abs(SYSTEM_CLOCK.wallMs() - Date.now())).to.be.below(1_000);
  });

  it("a test's fake `now` drives both", function () {
    const clock = clockFrom(() => 42);
    expect([clock.monotonicMs(), clock.wallMs()]).to.deep.equal([42, 42]);
    expect(clockFrom(undefined)).to.equal(SYSTEM_CLOCK);
  });
});

describe("the bounds' flags", function () {
  const settings = (...args: string[]) => controllerSettings(parseControllerFlags(args));

  it("default to 8 nodes at once, 10 s per API call, 30 s per pass", function () {
    expect(settings().config).to.deep.include({
      nodeConcurrency: 8,
      apiTimeoutMs: 10_000,
      passTimeoutMs: 30_000,
    });
  });

  it("take --node-concurrency, --api-timeout and --pass-timeout, bounded", function () {
    const { config } = settings("--node-concurrency", "2", "--api-timeout", "5s", "--pass-timeout", "1m");
    expect(config).to.deep.include({ nodeConcurrency: 2, apiTimeoutMs: 5_000, passTimeoutMs: 60_000 });
    expect(() => settings("--node-concurrency", "0")).to.throw(RekindleError, "a count from 1 to 64");
    expect(() => settings("--api-timeout", "0s")).to.throw(RekindleError, "--api-timeout");
  });

  it("lengthen the pass's default with a longer --driver-timeout, and refuse a pass shorter than a driver call and two API calls", function () {
    expect(settings("--driver-timeout", "20s").config.passTimeoutMs).to.equal(40_000);
    expect(() => settings("--pass-timeout", "20s")).to.throw(
      RekindleError,
      "--pass-timeout 20s is shorter than a driver call and two API calls (--driver-timeout 10s, --api-timeout 10s); valid: at least 30s",
    );
  });
});
