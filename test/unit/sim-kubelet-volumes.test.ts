// The sim's kubelet volume managers (lib/cluster/sim/kubelet/volumes.ts) against a stand-in API server, in real time
// with a 1 s status cadence: a node reports its pods' CSI volumes in use only at its own status
// writes, and a pod is marked mountable at the reconciler's first look (every 100 ms) that finds
// each claim bound and each attachable volume reported in use and attached there. A local volume
// needs only binding; a node whose kubelet does not run does nothing. The assertions are on order
// and cause (which write came first, what a mark waited for), never on how late a real timer ran,
// so a loaded machine cannot fail them; a lower bound ("not before its phase") stays, as timers never
// fire early.
import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import { SimKubeletVolumes } from "../../lib/cluster/sim/kubelet/volumes.js";
import { nextStatusWriteMs } from "../../lib/cluster/kubelet-volume-timing.js";
import { csiUniqueVolumeName } from "../../lib/cluster/sim/kubelet/volumes-in-use.js";
import { VOLUMES_ATTACHED_ANNOTATION } from "../../lib/kube/csi-provisioner.js";
import { sleep } from "../../lib/util/time.js";
import { list, startFakeApiServer, type FakeApiServer } from "../support/fake-apiserver.js";
import { until } from "../support/until.js";

const DRIVER = "sim.csi.rekindle.dev";
const STATUS_INTERVAL_MS = 1000;
const LIVE = "worker-2";
const DEAD = "worker-9";

function pod(name: string, claim: string, node = LIVE): k8s.V1Pod {
  return {
    metadata: { name, namespace: "ns", annotations: {} },
    spec: {
      nodeName: node,
      containers: [{ name: "c", image: "pause" }],
      volumes: [{ name: "data", persistentVolumeClaim: { claimName: claim } }],
    },
    status: { phase: "Pending" },
  };
}

const claim = (name: string, volumeName?: string): k8s.V1PersistentVolumeClaim => ({
  metadata: { name, namespace: "ns" },
  spec: { ...(volumeName !== undefined ? { volumeName } : {}) },
});

const csiVolume = (name: string, handle: string): k8s.V1PersistentVolume => ({
  metadata: { name },
  spec: { csi: { driver: DRIVER, volumeHandle: handle } },
});

const attachment = (volume: string, node: string, attached: boolean): k8s.V1VolumeAttachment => ({
  metadata: { name: `va-${volume}-${node}` },
  spec: { attacher: DRIVER, nodeName: node, source: { persistentVolumeName: volume } },
  status: { attached },
});

async function readBody(req: NodeJS.ReadableStream): Promise<unknown> {
  let text = "";
  for await (const chunk of req) text += String(chunk);
  return JSON.parse(text) as unknown;
}

describe("sim kubelet volume managers: volumesInUse at the status cadence, mounts on the kubelet's checks", function () {
  this.timeout(20_000);
  let api: FakeApiServer;
  let kubelets: SimKubeletVolumes;
  const pods = [
    pod("local", "data-local"),
    pod("csi-attached", "data-a"),
    pod("csi-waiting", "data-w"),
    pod("unbound", "data-unbound"),
    pod("on-dead-node", "data-d", DEAD),
  ];
  const attachments = [
    attachment("pv-a", LIVE, true),
    attachment("pv-w", LIVE, false),
    attachment("pv-d", DEAD, true),
  ];
  /** When each pod was marked, and each node's status written (ms since the epoch), with what. */
  const marked = new Map<string, number>();
  const statusWrites: { node: string; at: number; volumesInUse: string[] }[] = [];
  let startedAt = 0;

  before(async function () {
    const patchPod = (name: string) => () => {
      marked.set(name, Date.now());
      const p = pods.find((x) => x.metadata?.name === name);
      if (p?.metadata) p.metadata.annotations = { [VOLUMES_ATTACHED_ANNOTATION]: "true" };
      return { body: p };
    };
    api = await startFakeApiServer({
      "GET /api/v1/pods": () => list("PodList", pods),
      "GET /apis/storage.k8s.io/v1/volumeattachments": () => list("VolumeAttachmentList", attachments),
      "GET /api/v1/persistentvolumeclaims": () =>
        list("PersistentVolumeClaimList", [
          claim("data-local", "pv-local"),
          claim("data-a", "pv-a"),
          claim("data-w", "pv-w"),
          claim("data-unbound"),
          claim("data-d", "pv-d"),
        ]),
      "GET /api/v1/persistentvolumes": () =>
        list("PersistentVolumeList", [
          { metadata: { name: "pv-local" }, spec: { local: { path: "/tmp" } } },
          csiVolume("pv-a", "a"),
          csiVolume("pv-w", "w"),
          csiVolume("pv-d", "d"),
        ]),
      [`GET /api/v1/nodes/${LIVE}/status`]: () => ({
        body: { kind: "Node", apiVersion: "v1", metadata: { name: LIVE }, status: {} },
      }),
      ...Object.fromEntries(
        [LIVE, DEAD].map((node) => [
          `PATCH /api/v1/nodes/${node}/status`,
          // Recorded when the request arrives; the body is read as it streams.
          (req: NodeJS.ReadableStream) => {
            const at = Date.now();
            void readBody(req).then((body) => {
              const status = (body as { status?: { volumesInUse?: string[] } }).status;
              statusWrites.push({ node, at, volumesInUse: status?.volumesInUse ?? [] });
            });
            return { body: { kind: "Node", apiVersion: "v1", metadata: { name: node } } };
          },
        ]),
      ),
      ...Object.fromEntries(
        pods.map((p) => [
          `PATCH /api/v1/namespaces/ns/pods/${p.metadata?.name ?? ""}`,
          patchPod(p.metadata?.name ?? ""),
        ]),
      ),
    });
    kubelets = new SimKubeletVolumes({
      kc: api.kc,
      driver: DRIVER,
      statusIntervalMs: STATUS_INTERVAL_MS,
      isLive: (node) => node === LIVE,
    });
    startedAt = Date.now();
    await kubelets.start();
  });

  after(async function () {
    await kubelets.stop();
    await api.close();
  });

  it("writes the node's CSI volumes in use at its own status phase, once, and nothing for a node whose kubelet is down", async function () {
    await until(() => statusWrites.length > 0, "the first status write", {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    // Its phase's write is the only one until the next phase is due: wait that long past it.
    const due = nextStatusWriteMs(LIVE, startedAt, STATUS_INTERVAL_MS);
    await sleep(Math.max(0, due + 0.5 * STATUS_INTERVAL_MS - Date.now()));
    expect(statusWrites.map((w) => [w.node, w.volumesInUse])).to.deep.equal([
      [LIVE, [csiUniqueVolumeName(DRIVER, "a"), csiUniqueVolumeName(DRIVER, "w")]],
    ]);
    // Not before its phase (a timer never fires early; 50 ms for the two clocks' reads).
    expect(statusWrites[0]?.at).to.be.at.least(due - 50);
  });

  it("marks a pod on a bound local volume", async function () {
    // That it waits for no status write is shown apart, by a node that never writes one (below).
    await until(() => marked.has("local"), "local marked", { timeoutMs: 10_000, intervalMs: 20 });
  });

  it("marks a pod whose volume is attached only once the status write has reported it", async function () {
    await until(() => marked.has("csi-attached"), "csi-attached marked", {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const writtenAt = statusWrites[0]?.at ?? Infinity;
    expect(marked.get("csi-attached")).to.be.at.least(writtenAt);
  });

  it("keeps a pod whose volume is not attached waiting, and marks it after the attach", async function () {
    expect(marked.has("csi-waiting")).to.equal(false);
    const va = attachments[1];
    if (va?.status) va.status.attached = true;
    const attachedAt = Date.now();
    await until(() => marked.has("csi-waiting"), "csi-waiting marked", { timeoutMs: 10_000, intervalMs: 20 });
    expect(marked.get("csi-waiting")).to.be.at.least(attachedAt);
  });

  it("never marks a pod with an unbound claim, or one on a node whose kubelet is down", function () {
    expect(marked.has("unbound")).to.equal(false);
    expect(marked.has("on-dead-node")).to.equal(false);
    expect(statusWrites.filter((w) => w.node === DEAD)).to.deep.equal([]);
  });
});

describe("sim kubelet volume managers: a node whose status write never comes", function () {
  this.timeout(20_000);
  let api: FakeApiServer;
  let kubelets: SimKubeletVolumes;
  const marked = new Set<string>();
  const pods = [pod("local", "data-local"), pod("csi-attached", "data-a")];

  before(async function () {
    api = await startFakeApiServer({
      "GET /api/v1/pods": () => list("PodList", pods),
      "GET /apis/storage.k8s.io/v1/volumeattachments": () =>
        list("VolumeAttachmentList", [attachment("pv-a", LIVE, true)]),
      "GET /api/v1/persistentvolumeclaims": () =>
        list("PersistentVolumeClaimList", [claim("data-local", "pv-local"), claim("data-a", "pv-a")]),
      "GET /api/v1/persistentvolumes": () =>
        list("PersistentVolumeList", [
          { metadata: { name: "pv-local" }, spec: { local: { path: "/tmp" } } },
          csiVolume("pv-a", "a"),
        ]),
      ...Object.fromEntries(
        pods.map((p) => [
          `PATCH /api/v1/namespaces/ns/pods/${p.metadata?.name ?? ""}`,
          () => {
            marked.add(p.metadata?.name ?? "");
            return { body: p };
          },
        ]),
      ),
    });
    kubelets = new SimKubeletVolumes({
      kc: api.kc,
      driver: DRIVER,
      // A clock stopped just past the node's phase: its first status write is an hour away.
      statusIntervalMs: 3_600_000,
      now: () => nextStatusWriteMs(LIVE, 0, 3_600_000) + 1,
      isLive: (node) => node === LIVE,
    });
    await kubelets.start();
  });

  after(async function () {
    await kubelets.stop();
    await api.close();
  });

  it("marks the pod on a local volume, and keeps the one whose attached volume no status write has reported", async function () {
    await until(() => marked.has("local"), "local marked", { timeoutMs: 10_000, intervalMs: 20 });
    // Ten looks of the reconciler after the local pod's: still unmarked, for want of the write.
    await sleep(1_000);
    expect([...marked]).to.deep.equal(["local"]);
  });
});

describe("sim kubelet status writes: the Ready heartbeat of nodes that report at every write", function () {
  this.timeout(20_000);
  const REPORTING = "worker-1";
  const QUIET = "worker-3";
  let api: FakeApiServer;
  let kubelets: SimKubeletVolumes;
  const writes: { node: string; contentType: string; status: Record<string, unknown> }[] = [];
  let startedAt = 0;

  before(async function () {
    const localPod = (name: string, node: string): k8s.V1Pod => ({
      metadata: { name, namespace: "ns" },
      spec: { nodeName: node, containers: [{ name: "c", image: "pause" }] },
      status: { phase: "Running" },
    });
    api = await startFakeApiServer({
      "GET /api/v1/pods": () => list("PodList", [localPod("a", REPORTING), localPod("b", QUIET)]),
      "GET /apis/storage.k8s.io/v1/volumeattachments": () => list("VolumeAttachmentList", []),
      "GET /api/v1/persistentvolumeclaims": () => list("PersistentVolumeClaimList", []),
      "GET /api/v1/persistentvolumes": () => list("PersistentVolumeList", []),
      ...Object.fromEntries(
        [REPORTING, QUIET].flatMap((node) => [
          [
            `GET /api/v1/nodes/${node}/status`,
            () => ({ body: { kind: "Node", apiVersion: "v1", metadata: { name: node }, status: {} } }),
          ],
          [
            `PATCH /api/v1/nodes/${node}/status`,
            (req: NodeJS.ReadableStream & { headers: Record<string, string | undefined> }) => {
              const contentType = req.headers["content-type"] ?? "";
              void readBody(req).then((body) => {
                const status = (body as { status?: Record<string, unknown> }).status ?? {};
                writes.push({ node, contentType, status });
              });
              return { body: { kind: "Node", apiVersion: "v1", metadata: { name: node } } };
            },
          ],
        ]),
      ),
    });
    kubelets = new SimKubeletVolumes({
      kc: api.kc,
      driver: DRIVER,
      statusIntervalMs: STATUS_INTERVAL_MS,
      isLive: () => true,
      reportsHeartbeat: (node) => node === REPORTING,
    });
    startedAt = Date.now();
    await kubelets.start();
    await until(
      () => writes.filter((w) => w.node === REPORTING).length >= 2,
      "two status writes of the reporting node",
      {
        timeoutMs: 15_000,
        intervalMs: 20,
      },
    );
  });

  after(async function () {
    await kubelets.stop();
    await api.close();
  });

  it("refreshes Ready's lastHeartbeatTime at each status write, merged by type, with nothing else changed", function () {
    const reported = writes.filter((w) => w.node === REPORTING);
    expect(reported.length).to.be.at.least(2);
    for (const w of reported) {
      expect(w.contentType).to.include("strategic-merge-patch");
      expect(Object.keys(w.status)).to.deep.equal(["conditions"]);
      const [condition, ...others] = w.status.conditions as { type: string; lastHeartbeatTime: string }[];
      expect(others).to.deep.equal([]);
      expect(condition?.type).to.equal("Ready");
      // Written during this test (RFC 3339 has whole seconds: the start's second counts).
      expect(Date.parse(condition?.lastHeartbeatTime ?? "")).to.be.at.least(
        Math.floor(startedAt / 1000) * 1000,
      );
      expect(Date.parse(condition?.lastHeartbeatTime ?? "")).to.be.at.most(Date.now());
    }
    const beats = reported.map((w) =>
      Date.parse((w.status.conditions as { lastHeartbeatTime: string }[])[0]!.lastHeartbeatTime),
    );
    expect(beats).to.deep.equal([...beats].sort((a, b) => a - b));
    expect(new Set(beats).size).to.equal(beats.length);
  });

  it("writes nothing for a node that reports only changes while nothing changed", function () {
    expect(writes.filter((w) => w.node === QUIET)).to.deep.equal([]);
  });
});
