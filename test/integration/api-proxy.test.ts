// The API fault proxy in front of a real kube-apiserver (a one-worker sim cluster), through
// client-node's own Watch and API clients: each rule seen from the client's side, with the objects
// changed and read straight at the apiserver, so "nothing forwarded" is measured against changes
// that did happen, and "never reached the apiserver" against what the apiserver holds.
import { expect } from "chai";
import { join } from "node:path";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { SimCluster } from "../../lib/cluster/sim/cluster.js";
import { startApiProxy, type ApiProxy } from "../../lib/fault/api-proxy/index.js";
import { isNotFound, k8s } from "../../lib/kube/client.js";
import { ensureNamespace } from "../../lib/workloads/deploy.js";
import { testRunDir } from "../support/run-dir.js";
import { destroyLeavingNothing } from "../support/sim-leftovers.js";
import { until } from "../support/until.js";

const NAMESPACE = "proxy-it";
const CONFIGMAPS = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
const LABEL = "rekindle.dev/proxy-it";
/** Long enough for an event the apiserver sent to cross the proxy on a loaded machine. */
const SETTLE_MS = 1_500;
const WAIT = { timeoutMs: 15_000 };

interface ClientWatch {
  /** "TYPE name" of each event. */
  events: string[];
  /** When each event arrived (Date.now()). */
  at: number[];
  ended: boolean;
  stop(): void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Its events but the bookmarks (which the apiserver sends when it likes). */
const changes = (watch: ClientWatch) => watch.events.filter((e) => !e.startsWith("BOOKMARK"));

describe("the API fault proxy in front of a real kube-apiserver (sim)", function () {
  let cluster: SimCluster | undefined;
  let direct: k8s.CoreV1Api;
  let proxy: ApiProxy;
  let through: k8s.CoreV1Api;
  const watches: ClientWatch[] = [];
  let serial = 0;

  before(async function () {
    cluster = await SimCluster.start({
      name: "it-api-proxy",
      root: join(testRunDir("api-proxy"), "cluster"),
      workers: 1,
      zones: 1,
      profile: TIMING_PROFILES.fast,
    });
    const kc = cluster.kubeConfig();
    direct = kc.makeApiClient(k8s.CoreV1Api);
    await ensureNamespace(kc, NAMESPACE, cluster.runId);
  });

  after(async function () {
    if (cluster) await destroyLeavingNothing(cluster);
  });

  beforeEach(async function () {
    if (!cluster) throw new Error("no cluster");
    proxy = await startApiProxy({ kubeconfig: cluster.kubeConfig(), controlPort: false });
    through = proxy.kubeConfig().makeApiClient(k8s.CoreV1Api);
  });

  afterEach(async function () {
    for (const w of watches.splice(0)) w.stop();
    await proxy.close();
  });

  /** A ConfigMap name no other test used. */
  const fresh = () => `cm-${++serial}`;

  function configMap(name: string, value = "0"): k8s.V1ConfigMap {
    return { metadata: { name, labels: { [LABEL]: "yes" } }, data: { value } };
  }

  const setValue = (name: string, value: string) =>
    direct.patchNamespacedConfigMap(
      { name, namespace: NAMESPACE, body: { data: { value } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );

  /** A watch of the test's ConfigMaps through the proxy, answered (its headers in) before it resolves. */
  async function watchThrough(query: Record<string, unknown> = {}): Promise<ClientWatch> {
    const watch: ClientWatch = { events: [], at: [], ended: false, stop: () => undefined };
    const controller = await new k8s.Watch(proxy.kubeConfig()).watch(
      CONFIGMAPS,
      { labelSelector: LABEL, allowWatchBookmarks: true, ...query },
      (type, object: k8s.V1ConfigMap) => {
        watch.events.push(`${type} ${object.metadata?.name ?? ""}`);
        watch.at.push(Date.now());
      },
      () => {
        watch.ended = true;
      },
    );
    watch.stop = () => {
      controller.abort();
    };
    watches.push(watch);
    return watch;
  }

  /** Waits until the proxy holds `count` open watches of ConfigMaps in the state asked. */
  const streams = (state: string, count = 1) =>
    until(
      () => proxy.status().streams.filter((s) => s.verb === "watch" && s.state === state).length === count,
      `${count} ConfigMap watch(es) ${state} in the proxy`,
      WAIT,
    );

  it("freeze: an open watch forwards nothing while the ConfigMap changes, then everything once cleared", async function () {
    const name = fresh();
    const watch = await watchThrough();
    await direct.createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap(name) });
    await until(() => changes(watch).length === 1, "the ADDED event arrives", WAIT);
    proxy.setRules(["freeze,configmaps.core"]);
    await streams("frozen");
    await setValue(name, "1");
    await setValue(name, "2");
    // The apiserver has the changes; the proxy holds them.
    expect((await direct.readNamespacedConfigMap({ name, namespace: NAMESPACE })).data?.["value"]).to.equal(
      "2",
    );
    await sleep(SETTLE_MS);
    expect(changes(watch)).to.deep.equal([`ADDED ${name}`]);
    expect(watch.ended).to.equal(false);
    proxy.clearRules();
    await until(() => changes(watch).length === 3, "the held events arrive once cleared", WAIT);
    expect(changes(watch)).to.deep.equal([`ADDED ${name}`, `MODIFIED ${name}`, `MODIFIED ${name}`]);
    // And it flows on.
    await setValue(name, "3");
    await until(() => changes(watch).length === 4, "a later change arrives", WAIT);
  });

  it("bookmarks: a watch forwards only the apiserver's BOOKMARK, not the objects it streams", async function () {
    const before = fresh();
    await direct.createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap(before) });
    proxy.setRules(["bookmarks,configmaps"]);
    // A watch-list stream: the existing objects as ADDED, then a BOOKMARK marking their end.
    const watch = await watchThrough({ sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" });
    await until(() => watch.events.some((e) => e.startsWith("BOOKMARK")), "the apiserver's bookmark", WAIT);
    const after = fresh();
    await direct.createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap(after) });
    await setValue(before, "1");
    await sleep(SETTLE_MS);
    expect(
      watch.events.every((e) => e.startsWith("BOOKMARK")),
      watch.events.join(", "),
    ).to.equal(true);
    // At least the ADDED of the ConfigMap made before, the new one's and the change were filtered.
    expect(proxy.status().counters.filteredEvents).to.be.at.least(3);
    proxy.clearRules();
    await setValue(after, "1");
    await until(() => watch.events.includes(`MODIFIED ${after}`), "events flow once cleared", WAIT);
  });

  it("close: every open ConfigMap watch ends at once, a new one ends at once, a Pod watch stays open", async function () {
    const first = await watchThrough();
    const second = await watchThrough();
    const podEvents: string[] = [];
    const pods = await new k8s.Watch(proxy.kubeConfig()).watch(
      `/api/v1/namespaces/${NAMESPACE}/pods`,
      {},
      (type: string) => podEvents.push(type),
      () => podEvents.push("ended"),
    );
    try {
      await streams("forwarding", 3);
      proxy.setRules(["close,configmaps"]);
      await until(() => first.ended && second.ended, "both ConfigMap watches end", WAIT);
      const later = await watchThrough();
      await until(() => later.ended, "a new ConfigMap watch ends at once", WAIT);
      await sleep(SETTLE_MS);
      expect(podEvents).to.deep.equal([]);
      expect(proxy.status().streams.map((s) => s.target)).to.deep.equal([`pods/v1 ${NAMESPACE} (watch)`]);
      proxy.clearRules();
      const again = await watchThrough();
      const name = fresh();
      await direct.createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap(name) });
      await until(() => again.events.includes(`ADDED ${name}`), "a watch opened after clear flows", WAIT);
    } finally {
      pods.abort();
    }
  });

  it("drop-writes: a create is answered 503 and the apiserver never has the ConfigMap; reads still pass", async function () {
    const name = fresh();
    proxy.setRules(["drop-writes,configmaps"]);
    const refused = await through
      .createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap(name) })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect((refused as k8s.ApiException<unknown> | undefined)?.code).to.equal(503);
    const read = await direct.readNamespacedConfigMap({ name, namespace: NAMESPACE }).then(
      () => "found",
      (error: unknown) => (isNotFound(error) ? "not found" : error),
    );
    expect(read).to.equal("not found");
    // A read through the proxy is not a write: it reaches the apiserver (and hears its 404).
    const readThrough = await through.readNamespacedConfigMap({ name, namespace: NAMESPACE }).then(
      () => "found",
      (error: unknown) => (isNotFound(error) ? "not found" : error),
    );
    expect(readThrough).to.equal("not found");
    expect(proxy.status().counters.droppedWrites).to.equal(1);
  });

  it("delay: a write reaches the apiserver no sooner than the delay, and a watch event arrives no sooner", async function () {
    const DELAY_MS = 1_000;
    const watch = await watchThrough();
    const name = fresh();
    const seen: number[] = [];
    const directWatch = await new k8s.Watch(cluster?.kubeConfig() ?? new k8s.KubeConfig()).watch(
      CONFIGMAPS,
      { fieldSelector: `metadata.name=${name}` },
      (type: string) => {
        if (type === "ADDED") seen.push(Date.now());
      },
      () => undefined,
    );
    try {
      proxy.setRules([`delay=${DELAY_MS}ms,configmaps`]);
      const sentAt = Date.now();
      await through.createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap(name) });
      // The apiserver's own watch (not through the proxy) saw the ConfigMap made no sooner.
      await until(() => seen.length === 1, "the apiserver has the ConfigMap", WAIT);
      expect((seen[0] ?? 0) - sentAt).to.be.at.least(DELAY_MS);
      // The event of the proxied watch comes a delay after the apiserver sent it (a write, straight).
      const other = fresh();
      const madeAt = Date.now();
      await direct.createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap(other) });
      await until(() => watch.events.includes(`ADDED ${other}`), "the delayed event", WAIT);
      const at = watch.at[watch.events.indexOf(`ADDED ${other}`)] ?? 0;
      expect(at - madeAt).to.be.at.least(DELAY_MS);
      expect(proxy.status().counters.delayed).to.be.at.least(1);
    } finally {
      directWatch.abort();
    }
  });
});
