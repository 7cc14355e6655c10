// The controller's watch caches (issue 25 item 1): a LIST, then a WATCH from its resourceVersion;
// receipts timed on the controller's clock; a quiet watch reopened, not judged stale; a watch the
// server does not answer is stale, and the gap is a blind spell; 410 relists. A fake source and a
// fake clock: the point is the logic.
import { expect } from "chai";
import { WatchStatusError } from "../../lib/kube/watch-stream.js";
import {
  quietCheckIntervalMs,
  WatchCache,
  type KubeObject,
  type WatchSource,
} from "../../lib/controller/watch-cache.js";
import { RecoveryController } from "../../lib/controller/controller.js";
import { ClusterCaches, STATE_REOPEN_QUIET_MS } from "../../lib/controller/cluster-caches.js";
import { DEFAULT_CONTROLLER_CONFIG } from "../../lib/controller/config.js";
import { fenceDriverRegistry } from "../../lib/controller/drivers/registry.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import { list, startFakeApiServer, type FakeApiServer } from "../support/fake-apiserver.js";

interface Obj extends KubeObject {
  value?: string;
}

const obj = (name: string, rv: string, value = ""): Obj => ({
  metadata: { name, resourceVersion: rv },
  value,
});

/** A scripted API: lists `items`, and each WATCH is one the test answers, feeds and ends. */
class FakeSource implements WatchSource<Obj> {
  readonly what = "things";
  items: Obj[] = [];
  listVersion = "10";
  lists = 0;
  listFails: Error | undefined;
  /** The resourceVersion each WATCH asked for. */
  watches: string[] = [];
  /** Answer WATCH requests at once (false: hang, as a frozen API server). */
  answer = true;
  #feed: ((type: string, object: Obj) => void) | undefined;
  #end: (() => void) | undefined;

  list(): Promise<{ items: Obj[]; resourceVersion: string }> {
    this.lists += 1;
    if (this.listFails) return Promise.reject(this.listFails);
    return Promise.resolve({ items: [...this.items], resourceVersion: this.listVersion });
  }

  watch(rv: string, signal: AbortSignal, onEvent: (type: string, object: Obj) => void) {
    this.watches.push(rv);
    return new Promise<{ ended: Promise<void> }>((resolve, reject) => {
      const ended = new Promise<void>((done) => {
        this.#end = done;
        signal.addEventListener("abort", () => {
          done();
          reject(new Error("aborted"));
        });
      });
      this.#feed = onEvent;
      if (this.answer) resolve({ ended });
    });
  }

  send(type: string, object: unknown): void {
    this.#feed?.(type, object as Obj);
  }

  endStream(): void {
    this.#end?.();
  }
}

describe("controller: watch caches", function () {
  let t = 0;
  let source: FakeSource;
  let cache: WatchCache<Obj>;
  const changes: string[] = [];
  const until = (what: string, ok: () => boolean) =>
    pollUntil(() => Promise.resolve(ok() ? true : undefined), { what, timeoutMs: 3_000, intervalMs: 2 });

  beforeEach(function () {
    t = 1_000;
    changes.length = 0;
    source = new FakeSource();
    source.items = [obj("a", "5", "a1"), obj("b", "6", "b1")];
    cache = new WatchCache<Obj>({
      source,
      now: () => t,
      staleAfterMs: 3_000,
      reopenQuietMs: 1_500,
      tickMs: 2,
      minRetryMs: 5,
      maxRetryMs: 20,
      onChange: (type, object, _previous, atMs) =>
        changes.push(`${type} ${object.metadata?.name ?? ""} @${atMs}`),
    });
  });

  afterEach(async function () {
    await cache.stop();
  });

  it("lists, then applies each event, timing its receipt on the controller's clock", async function () {
    await cache.whenSynced(1_000);
    await until("the watch from the LIST's resourceVersion", () => source.watches.length === 1);
    expect(source.watches).to.deep.equal(["10"]);
    t = 1_700;
    source.send("MODIFIED", obj("a", "11", "a2"));
    source.send("DELETED", obj("b", "12"));
    source.send("ADDED", obj("c", "13", "c1"));
    expect(cache.get("a")?.value).to.equal("a2");
    expect(cache.get("b")).to.equal(undefined);
    expect(changes).to.deep.equal([
      "ADDED a @1000",
      "ADDED b @1000",
      "MODIFIED a @1700",
      "DELETED b @1700",
      "ADDED c @1700",
    ]);
    expect(cache.isCurrent(1_700 + 3_000)).to.equal(true);
    expect(cache.isCurrent(1_700 + 3_001)).to.equal(false);
  });

  it("reopens a quiet watch from its resourceVersion (no LIST), which keeps it current", async function () {
    await cache.whenSynced(1_000);
    await until("the first watch", () => source.watches.length === 1);
    source.send("BOOKMARK", { metadata: { resourceVersion: "20" } });
    t += 1_500;
    await until("the quiet watch reopened", () => source.watches.length === 2);
    expect(source.watches).to.deep.equal(["10", "20"]);
    expect(source.lists).to.equal(1);
    t += 2_000;
    // The server's answer to the reopened watch was a receipt at t - 2000: current for 1 s more.
    expect(cache.isCurrent()).to.equal(true);
    expect(cache.takeBlindSpell()).to.equal(undefined);
  });

  it("a watch the server does not answer goes stale: an ongoing blind spell, then one that ended", async function () {
    await cache.whenSynced(1_000);
    await until("the first watch", () => source.watches.length === 1);
    source.answer = false;
    t = 2_500; // quiet for 1.5 s: reopened, and the new WATCH hangs
    await until("the reopened watch", () => source.watches.length === 2);
    t = 4_100;
    expect(cache.isCurrent()).to.equal(false);
    expect(cache.staleness()).to.equal("things: nothing received for 3100 ms");
    expect(cache.takeBlindSpell()).to.deep.equal({ sinceAt: 1_000, untilAt: undefined });
    source.answer = true;
    t = 9_000; // the hanging WATCH is abandoned after 1.5 s more of quiet; the next is answered
    await until("a watch the server answered", () => cache.isCurrent());
    expect(cache.takeBlindSpell()).to.deep.equal({ sinceAt: 1_000, untilAt: 9_000 });
    expect(cache.takeBlindSpell()).to.equal(undefined);
    expect(source.lists).to.equal(1);
  });

  it("410 Gone relists, and what vanished meanwhile is deleted", async function () {
    await cache.whenSynced(1_000);
    await until("the first watch", () => source.watches.length === 1);
    source.items = [obj("a", "30", "a3")];
    source.listVersion = "31";
    t = 2_000;
    source.send("ERROR", { kind: "Status", code: 410, message: "too old resource version" });
    await until("the relist and the new watch", () => source.watches.length === 2);
    expect(source.lists).to.equal(2);
    expect(source.watches).to.deep.equal(["10", "31"]);
    expect(cache.get("b")).to.equal(undefined);
    expect(changes.slice(2)).to.deep.equal(["MODIFIED a @2000", "DELETED b @2000"]);
  });

  it("a WATCH answered 410 relists too; other failures retry from the same resourceVersion", async function () {
    const failing = new FakeSource();
    let calls = 0;
    failing.watch = (rv) => {
      failing.watches.push(rv);
      calls += 1;
      return Promise.reject(
        calls === 1 ? new Error("connection refused") : new WatchStatusError(410, "Gone"),
      );
    };
    const c = new WatchCache<Obj>({
      source: failing,
      now: () => t,
      staleAfterMs: 3_000,
      reopenQuietMs: 1_500,
      tickMs: 2,
      minRetryMs: 5,
    });
    try {
      await c.whenSynced(1_000);
      await until("a relist after the 410", () => failing.lists >= 2);
      expect(failing.watches.slice(0, 2)).to.deep.equal(["10", "10"]);
    } finally {
      await c.stop();
    }
  });

  it("a LIST that keeps failing: not current, and a read waiting for it says why", async function () {
    source.listFails = new Error("HTTP 403 forbidden");
    let error: unknown;
    await cache.whenSynced(100).catch((e: unknown) => (error = e));
    // The read waiting for the first LIST is told its failure at once; the cache keeps trying.
    expect(String(error)).to.contain("HTTP 403 forbidden");
    expect(cache.isCurrent()).to.equal(false);
    expect(cache.staleness()).to.equal("things: not listed yet (HTTP 403 forbidden)");
    source.listFails = undefined;
    await cache.whenSynced(1_000);
    expect(cache.isCurrent()).to.equal(true);
  });

  it("an event after a gap longer than staleAfter is a blind spell that ended then", async function () {
    await cache.whenSynced(1_000);
    await until("the first watch", () => source.watches.length === 1);
    t = 1_400;
    source.send("MODIFIED", obj("a", "40", "a4"));
    expect(cache.takeBlindSpell()).to.equal(undefined);
    // Between two looks of the controller, a 3.6 s gap closed by an event: still reported once.
    t = 5_000;
    source.send("MODIFIED", obj("a", "41", "a5"));
    expect(cache.takeBlindSpell(5_000)).to.deep.equal({ sinceAt: 1_400, untilAt: 5_000 });
  });

  it("by default looks at a quiet watch often enough to reopen it well before it could go stale", function () {
    // The caches' settings over --watch-stale-after's range: the Lease watch reopens at half of it,
    // the others 30 s after their last receipt and go stale that plus it. A look every 5 s at the
    // latter (a sixth of 30 s) reopened them at up to 35 s: stale, a blind pass, every 35 s.
    for (const staleAfterMs of [1_000, 3_000, 60_000]) {
      const settings = [
        [staleAfterMs / 2, staleAfterMs],
        [STATE_REOPEN_QUIET_MS, STATE_REOPEN_QUIET_MS + staleAfterMs],
      ] as const;
      for (const [reopenQuietMs, stale] of settings) {
        const tick = quietCheckIntervalMs(reopenQuietMs, stale);
        expect(tick, `reopen ${reopenQuietMs} ms, stale ${stale} ms`).to.be.at.most(
          (stale - reopenQuietMs) / 4,
        );
        expect(tick).to.be.at.least(10);
      }
    }
    expect(quietCheckIntervalMs(30_000, 33_000)).to.equal(750);
    expect(quietCheckIntervalMs(1_500, 3_000)).to.equal(250);
  });

  it("a quiet watch on the real clock is reopened and answered before it goes stale: no blind spell", async function () {
    const quiet = new FakeSource();
    quiet.items = [obj("a", "5")];
    const real = new WatchCache<Obj>({
      source: quiet,
      now: () => performance.now(),
      staleAfterMs: 700,
      reopenQuietMs: 600,
    });
    try {
      await real.whenSynced(1_000);
      await sleep(2_000);
      expect(quiet.watches.length, "reopened about every 600 ms").to.be.at.least(3);
      expect(real.takeBlindSpell()).to.equal(undefined);
      expect(real.isCurrent()).to.equal(true);
    } finally {
      await real.stop();
    }
  });
});

describe("controller: blind while its Lease watch is stale, and /healthz says so", function () {
  this.timeout(20_000);
  let now = 1_000_000;
  let frozen = false;
  let api: FakeApiServer;
  const lease = {
    metadata: { name: "a", namespace: "kube-node-lease" },
    spec: { holderIdentity: "a", leaseDurationSeconds: 40, renewTime: "2026-11-24T12:00:00.000000Z" },
  };

  before(async function () {
    api = await startFakeApiServer({
      "GET /api/v1/nodes": () =>
        list("NodeList", [
          {
            metadata: { name: "a", uid: "uid-a" },
            status: { conditions: [{ type: "Ready", status: "True" }] },
          },
        ]),
      // Frozen: neither a LIST nor a WATCH of the Leases is answered, as by a paused API server.
      "GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases": () =>
        frozen ? undefined : list("LeaseList", [lease]),
      "GET /apis/rekindle.dev/v1alpha1/nodefences": () => list("NodeFenceList", []),
      "GET /api/v1/namespaces/rekindle-system/configmaps": () => list("ConfigMapList", []),
      "GET /apis/storage.k8s.io/v1/volumeattachments": () => list("VolumeAttachmentList", []),
    });
  });

  after(async function () {
    await api.close();
  });

  it("the node's present state takes in every renewal received, though the Lease watch is read in batches", async function () {
    const caches = new ClusterCaches({
      kc: api.kc,
      config: {
        ...DEFAULT_CONTROLLER_CONFIG,
        // A minute between reads: only currentNode's read out of turn can see the renewal.
        leaseReadIntervalMs: 60_000,
      },
      now: () => performance.now(),
    });
    const renewed = "2026-11-24T12:00:10.000000Z";
    try {
      await caches.whenSynced(5_000);
      // The stand-in sends every Lease as ADDED first: the read after it starts the minute's pause.
      await sleep(100);
      lease.spec.renewTime = renewed;
      await sleep(200);
      expect(caches.leases.get("a", "kube-node-lease")?.spec?.renewTime).to.not.equal(renewed);
      expect(await caches.currentNode("a")).to.deep.equal({ renewTime: renewed });
    } finally {
      lease.spec.renewTime = "2026-11-24T12:00:00.000000Z";
      await caches.stop();
    }
  });

  it("decides nothing while blind, fails /healthz when blind too long, and restarts every clock after", async function () {
    const logs: string[] = [];
    const config = { ...DEFAULT_CONTROLLER_CONFIG, identity: "test", watchStaleAfterMs: 3_000 };
    const controller = new RecoveryController({
      kc: api.kc,
      config,
      fenceConfig: { templates: {} },
      drivers: fenceDriverRegistry([]),
      now: () => now,
      log: (line) => logs.push(line),
    });
    try {
      await controller.reconcileOnce();
      expect(controller.health().ok).to.equal(true);
      frozen = true;
      now += 2_000; // quiet for more than half of watchStaleAfter: the watch is reopened, and hangs
      await sleep(400);
      now += 1_500;
      let error: unknown;
      await controller.reconcileOnce().catch((e: unknown) => (error = e));
      expect(String(error)).to.contain("blind: node Leases: nothing received for 3500 ms");
      // The liveness limit: max(5 checks, API timeout + pass timeout + 2 checks) = 42 s.
      now += 42_000;
      const health = controller.health();
      expect(health.ok).to.equal(false);
      expect(health.message).to.match(
        /^no reconcile pass completed for \d+ ms: node Leases: nothing received for 45500 ms/,
      );
      frozen = false;
      now += 2_000; // the hanging WATCH is abandoned; the next is answered: blind from 0 to 47.5 s
      await pollUntil(
        async () => {
          try {
            await controller.reconcileOnce();
            return true;
          } catch {
            return undefined;
          }
        },
        { what: "a pass once the Lease watch answers again", timeoutMs: 5_000, intervalMs: 20 },
      );
      expect(controller.health().ok).to.equal(true);
      expect(logs.some((line) => line.startsWith("saw the API again after 48s blind"))).to.equal(
        true,
        logs.join("\n"),
      );
      expect(controller.unobservedNodes()).to.deep.equal(["a"]);
    } finally {
      await controller.stop();
    }
  });
});
