// The sim's stand-in for the kubelet's volume manager (markAttachedPods): a pod starts once each of
// its claims is bound and, for the sim CSI driver's volumes, attached to its node; a local
// PersistentVolume has no attach step, so bound is enough (node-local volumes on the sim).
import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import { markAttachedPods } from "../../lib/kube/csi-provisioner.js";
import { list, startFakeApiServer, type FakeApiServer } from "../support/fake-apiserver.js";

const DRIVER = "csi.rekindle.dev";

function pod(name: string, claim: string): k8s.V1Pod {
  return {
    metadata: { name, namespace: "ns" },
    spec: {
      nodeName: "worker-2",
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

const volume = (name: string, source: Partial<k8s.V1PersistentVolumeSpec>): k8s.V1PersistentVolume => ({
  metadata: { name },
  spec: source,
});

describe("sim volume manager: which pending pods may start", function () {
  let api: FakeApiServer;
  const marked: string[] = [];

  before(async function () {
    const patch = (name: string) => () => {
      marked.push(name);
      return { body: { kind: "Pod", apiVersion: "v1", metadata: { name, namespace: "ns" } } };
    };
    api = await startFakeApiServer({
      "GET /api/v1/pods": () =>
        list("PodList", [
          pod("local", "data-local"),
          pod("csi-attached", "data-csi-a"),
          pod("csi-waiting", "data-csi-w"),
          pod("unbound", "data-unbound"),
        ]),
      "GET /apis/storage.k8s.io/v1/volumeattachments": () =>
        list("VolumeAttachmentList", [
          {
            metadata: { name: "va-a" },
            spec: { attacher: DRIVER, nodeName: "worker-2", source: { persistentVolumeName: "pv-csi-a" } },
            status: { attached: true },
          },
        ]),
      "GET /api/v1/persistentvolumeclaims": () =>
        list("PersistentVolumeClaimList", [
          claim("data-local", "pv-local"),
          claim("data-csi-a", "pv-csi-a"),
          claim("data-csi-w", "pv-csi-w"),
          claim("data-unbound"),
        ]),
      "GET /api/v1/persistentvolumes": () =>
        list("PersistentVolumeList", [
          volume("pv-local", { local: { path: "/tmp" } }),
          volume("pv-csi-a", { csi: { driver: DRIVER, volumeHandle: "a" } }),
          volume("pv-csi-w", { csi: { driver: DRIVER, volumeHandle: "w" } }),
        ]),
      "PATCH /api/v1/namespaces/ns/pods/local": patch("local"),
      "PATCH /api/v1/namespaces/ns/pods/csi-attached": patch("csi-attached"),
      "PATCH /api/v1/namespaces/ns/pods/csi-waiting": patch("csi-waiting"),
      "PATCH /api/v1/namespaces/ns/pods/unbound": patch("unbound"),
    });
  });

  after(async function () {
    await api.close();
  });

  it("marks a pod on a bound local volume at once, a CSI one once attached, an unbound one never", async function () {
    await markAttachedPods(api.kc, { driver: DRIVER });
    expect(marked.sort()).to.deep.equal(["csi-attached", "local"]);
    expect(api.requests.filter((r) => r.startsWith("PATCH"))).to.have.length(2);
  });
});
