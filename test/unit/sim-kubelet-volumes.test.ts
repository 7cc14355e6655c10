// The sim's kubelet volume managers (lib/cluster/sim/kubelet/volumes.ts) against a stand-in API server, in real time
// with a 1 s status cadence: a node reports its pods' CSI volumes in use only at its own status
// writes, and a pod is marked mountable at the reconciler's first look (every 100 ms) that finds
// each claim bound and each attachable volume reported in use and attached there. A local volume
// needs only binding; a node whose kubelet does not run does nothing.
import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import { SimKubeletVolumes } from "../../lib/cluster/sim/kubelet/volumes.js";
import { nextStatusWriteMs } from "../../lib/cluster/kubelet-volume-timing.js";
import { csiUniqueVolumeName } from "../../lib/cluster/sim/kubelet/volumes-in-use.js";
import { VOLUMES_ATTACHED_ANNOTATION } from "../../lib/kube/csi-provisioner.js";
import { sleep } from "../../lib/util/time.js";
import { list, startFakeApiServer, type FakeApiServer } from "../support/fake-apiserver.js";

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
    await sleep(2 * STATUS_INTERVAL_MS + 300);
    expect(statusWrites.map((w) => [w.node, w.volumesInUse])).to.deep.equal([
      [LIVE, [csiUniqueVolumeName(DRIVER, "a"), csiUniqueVolumeName(DRIVER, "w")]],
    ]);
    // Not before its phase, and the write of that phase, not the next one's: real timers under a
    // loaded machine run late, so the bound is the next phase, not a tight allowance.
    const due = nextStatusWriteMs(LIVE, startedAt, STATUS_INTERVAL_MS);
    expect(statusWrites[0]?.at).to.be.within(due - 50, due + 0.9 * STATUS_INTERVAL_MS);
  });

  it("marks a pod on a bound local volume at its first check, waiting for no status write", function () {
    // Its first check comes once the caches have listed: within the first status interval even on
    // a loaded machine (the pod that needs a status write waits for the node's phase, anywhere in it).
    expect((marked.get("local") ?? Infinity) - startedAt).to.be.below(STATUS_INTERVAL_MS);
  });

  it("marks a pod whose volume is attached only once the status write has reported it, at the next look", function () {
    const writtenAt = statusWrites[0]?.at ?? 0;
    const at = marked.get("csi-attached");
    expect(at, "csi-attached marked").to.be.a("number");
    expect(at).to.be.at.least(writtenAt);
    // After that write, and before the next one could have been needed.
    expect((at ?? 0) - writtenAt).to.be.below(STATUS_INTERVAL_MS);
  });

  it("keeps a pod whose volume is not attached waiting, and marks it at the look after the attach", async function () {
    expect(marked.has("csi-waiting")).to.equal(false);
    const va = attachments[1];
    if (va?.status) va.status.attached = true;
    const attachedAt = Date.now();
    for (let i = 0; i < 100 && !marked.has("csi-waiting"); i++) await sleep(100);
    const at = marked.get("csi-waiting");
    expect(at, "csi-waiting marked").to.be.a("number");
    expect((at ?? 0) - attachedAt).to.be.below(1000);
  });

  it("never marks a pod with an unbound claim, or one on a node whose kubelet is down", function () {
    expect(marked.has("unbound")).to.equal(false);
    expect(marked.has("on-dead-node")).to.equal(false);
    expect(statusWrites.filter((w) => w.node === DEAD)).to.deep.equal([]);
  });
});

describe("sim kubelet status writes: the Ready heartbeat of nodes that report at every write", function () {
  this.timeout(20_000);
  const REPORTING = "worker-1";
  const QUIET = "worker-3";
  let api: FakeApiServer;
  let kubelets: SimKubeletVolumes;
  const writes: { node: string; contentType: string; status: Record<string, unknown> }[] = [];

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
    await kubelets.start();
    await sleep(3 * STATUS_INTERVAL_MS + 300);
  });

  after(async function () {
    await kubelets.stop();
    await api.close();
  });

  it("refreshes Ready's lastHeartbeatTime at each status write, merged by type, with nothing else changed", function () {
    const reported = writes.filter((w) => w.node === REPORTING);
    expect(reported.length).to.be.within(2, 4);
    for (const w of reported) {
      expect(w.contentType).to.include("strategic-merge-patch");
      expect(Object.keys(w.status)).to.deep.equal(["conditions"]);
      const [condition, ...others] = w.status.conditions as { type: string; lastHeartbeatTime: string }[];
      expect(others).to.deep.equal([]);
      expect(condition?.type).to.equal("Ready");
      expect(Date.now() - Date.parse(condition?.lastHeartbeatTime ?? "")).to.be.below(5 * STATUS_INTERVAL_MS);
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
