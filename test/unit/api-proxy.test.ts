// The API fault proxy against a stand-in apiserver whose watches the test writes to, through client-node's own Watch and API
// clients: each action seen from the client's side (what arrives, what ends, what the apiserver
// never received), and the apiserver asked as the proxy's kubeconfig user.
import { expect } from "chai";
import { startApiProxy, type ApiProxy } from "../../lib/fault/api-proxy/index.js";
import { k8s } from "../../lib/kube/client.js";
import { startFakeApiServer, type FakeApiServer } from "../support/fake-apiserver.js";
import { until } from "../support/until.js";

const LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
const PODS = "/api/v1/namespaces/default/pods";
/** Long enough for a line the apiserver wrote to cross two loopback connections. */
const SETTLE_MS = 300;

interface ClientWatch {
  events: string[];
  ended: boolean;
  stop(): void;
}

async function watchThrough(kc: k8s.KubeConfig, path: string): Promise<ClientWatch> {
  const watch: ClientWatch = { events: [], ended: false, stop: () => undefined };
  const controller = await new k8s.Watch(kc).watch(
    path,
    { allowWatchBookmarks: true },
    (type, object: { metadata?: { resourceVersion?: string } }) => {
      watch.events.push(`${type} ${object.metadata?.resourceVersion ?? ""}`);
    },
    () => {
      watch.ended = true;
    },
  );
  watch.stop = () => {
    controller.abort();
  };
  return watch;
}

function leaseObject(name: string, resourceVersion: string): Record<string, unknown> {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name, namespace: "kube-node-lease", resourceVersion },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the API fault proxy (against a stand-in apiserver)", function () {
  let upstream: FakeApiServer;
  let proxy: ApiProxy;
  const watches: ClientWatch[] = [];

  beforeEach(async function () {
    // No routes: every request is echoed and every watch held open for the test to write to.
    upstream = await startFakeApiServer({}, { unrouted: "echo" });
    proxy = await startApiProxy({ kubeconfig: upstream.kubeconfigPath });
  });

  afterEach(async function () {
    for (const w of watches.splice(0)) w.stop();
    await proxy.close();
    await upstream.close();
  });

  async function openWatch(path: string): Promise<ClientWatch> {
    const watch = await watchThrough(proxy.kubeConfig(), path);
    watches.push(watch);
    await until(() => upstream.watches(path) >= 1, `the watch of ${path} reaches the apiserver`);
    return watch;
  }

  it("forwards a watch, asking the apiserver as the kubeconfig's user", async function () {
    const watch = await openWatch(LEASES);
    upstream.send(LEASES, "ADDED", leaseObject("worker-1", "1"));
    await until(() => watch.events.length === 1, "the event reaches the client");
    expect(watch.events).to.deep.equal(["ADDED 1"]);
    const asked = upstream.received.find((r) => r.url.startsWith(LEASES));
    expect(asked?.headers.authorization).to.equal("Bearer fake-token");
    expect(asked?.url).to.include("allowWatchBookmarks=true");
  });

  it("freeze: an open watch forwards nothing until the rule is cleared, then what it held, in order", async function () {
    const leases = await openWatch(LEASES);
    const pods = await openWatch(PODS);
    upstream.send(LEASES, "ADDED", leaseObject("worker-1", "1"));
    await until(() => leases.events.length === 1, "the first event arrives");
    proxy.setRules(["freeze,leases.coordination.k8s.io"]);
    await until(
      () => proxy.status().streams.some((s) => s.target.startsWith("leases") && s.state === "frozen"),
      "the lease watch is frozen",
    );
    upstream.send(LEASES, "MODIFIED", leaseObject("worker-1", "2"));
    upstream.send(LEASES, "MODIFIED", leaseObject("worker-1", "3"));
    // A watch the rule does not match still flows: once its event is in, so would the frozen ones be.
    upstream.send(PODS, "ADDED", { metadata: { name: "p", resourceVersion: "7" } });
    await until(() => pods.events.length === 1, "the unfrozen watch's event arrives");
    await sleep(SETTLE_MS);
    expect(leases.events).to.deep.equal(["ADDED 1"]);
    expect(proxy.status().streams.find((s) => s.target.startsWith("leases"))?.state).to.equal("frozen");
    expect(leases.ended).to.equal(false);
    proxy.clearRules();
    await until(() => leases.events.length === 3, "the held events arrive once cleared");
    expect(leases.events).to.deep.equal(["ADDED 1", "MODIFIED 2", "MODIFIED 3"]);
  });

  it("bookmarks: a watch forwards its BOOKMARK events only", async function () {
    const leases = await openWatch(LEASES);
    proxy.setRules(["bookmarks,leases"]);
    upstream.send(LEASES, "ADDED", leaseObject("worker-1", "1"));
    upstream.send(LEASES, "BOOKMARK", leaseObject("", "2"));
    upstream.send(LEASES, "MODIFIED", leaseObject("worker-1", "3"));
    upstream.send(LEASES, "BOOKMARK", leaseObject("", "4"));
    // The second bookmark came after the MODIFIED event on the one stream: once it is in, the
    // MODIFIED event would have been too.
    await until(() => leases.events.length >= 2, "both bookmarks arrive");
    expect(leases.events).to.deep.equal(["BOOKMARK 2", "BOOKMARK 4"]);
    expect(proxy.status().counters.filteredEvents).to.equal(2);
  });

  it("close: every matching open stream ends now, and a new one ends at once; others stay open", async function () {
    const first = await openWatch(LEASES);
    const second = await openWatch(LEASES);
    const pods = await openWatch(PODS);
    proxy.setRules(["close,leases"]);
    await until(() => first.ended && second.ended, "both lease watches end");
    const later = await watchThrough(proxy.kubeConfig(), LEASES);
    watches.push(later);
    await until(() => later.ended, "a new lease watch ends at once");
    expect(pods.ended).to.equal(false);
    expect(proxy.status().streams.map((s) => s.target)).to.deep.equal(["pods/v1 default (watch)"]);
    upstream.send(PODS, "ADDED", { metadata: { name: "p", resourceVersion: "9" } });
    await until(() => pods.events.length === 1, "the other watch still flows");
  });

  it("close=open ends the open streams only; close=new leaves them and ends new ones", async function () {
    const open = await openWatch(LEASES);
    proxy.setRules(["close=new,leases"]);
    const refused = await watchThrough(proxy.kubeConfig(), LEASES);
    watches.push(refused);
    await until(() => refused.ended, "a new watch ends at once");
    expect(open.ended).to.equal(false);
    proxy.setRules(["close=open,leases"]);
    await until(() => open.ended, "the open watch ends");
    const allowed = await openWatch(LEASES);
    upstream.send(LEASES, "ADDED", leaseObject("worker-2", "5"));
    await until(() => allowed.events.length === 1, "a watch opened after close=open flows");
  });

  it("delay: a write reaches the apiserver no sooner than the delay, a watch event no sooner either", async function () {
    const leases = await openWatch(LEASES);
    proxy.setRules(["delay=400ms,leases"]);
    const sentAt = Date.now();
    upstream.send(LEASES, "MODIFIED", leaseObject("worker-1", "2"));
    await until(() => leases.events.length === 1, "the delayed event arrives", { timeoutMs: 5_000 });
    expect(Date.now() - sentAt).to.be.at.least(400);
    const api = proxy.kubeConfig().makeApiClient(k8s.CoordinationV1Api);
    const writeAt = Date.now();
    await api.createNamespacedLease({ namespace: "kube-node-lease", body: leaseObject("worker-9", "") });
    const arrived = upstream.received.find((r) => r.method === "POST");
    expect(arrived?.at ?? 0).to.be.at.least(writeAt + 400);
    expect(proxy.status().counters.delayed).to.equal(1);
  });

  it("drop-writes: a write is answered 503 and never reaches the apiserver; reads still do", async function () {
    proxy.setRules(["drop-writes,leases"]);
    const api = proxy.kubeConfig().makeApiClient(k8s.CoordinationV1Api);
    const refused = await api
      .createNamespacedLease({ namespace: "kube-node-lease", body: leaseObject("worker-1", "") })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).to.be.instanceOf(k8s.ApiException);
    expect((refused as k8s.ApiException<unknown>).code).to.equal(503);
    expect(upstream.received.filter((r) => r.method === "POST")).to.deep.equal([]);
    await api.readNamespacedLease({ namespace: "kube-node-lease", name: "worker-1" }).catch(() => undefined);
    expect(upstream.received.filter((r) => r.method === "GET").length).to.equal(1);
    expect(proxy.status().counters.droppedWrites).to.equal(1);
  });

  it("drop-writes=hang: a write is never answered while the rule holds, answered 503 once cleared", async function () {
    proxy.setRules(["drop-writes=hang,leases"]);
    const api = proxy.kubeConfig().makeApiClient(k8s.CoordinationV1Api);
    let settled: unknown = "pending";
    void api.patchNamespacedLease({ namespace: "kube-node-lease", name: "worker-1", body: [] }).then(
      () => (settled = "answered"),
      (error: unknown) => (settled = error),
    );
    await until(() => proxy.status().streams.some((s) => s.state === "dropped"), "the write is held");
    await sleep(SETTLE_MS);
    expect(settled).to.equal("pending");
    proxy.clearRules();
    await until(() => settled !== "pending", "the write is answered once cleared");
    expect((settled as k8s.ApiException<unknown>).code).to.equal(503);
    expect(upstream.received.filter((r) => r.method === "PATCH")).to.deep.equal([]);
  });

  it("a bad rule is refused whole: the rules in place stay", function () {
    proxy.setRules(["freeze,leases"]);
    expect(() => proxy.setRules(["close,pods", "frezee,nodes"])).to.throw(/did you mean freeze/);
    expect(proxy.status().rules).to.deep.equal(["freeze,leases,verbs=watch"]);
  });
});
