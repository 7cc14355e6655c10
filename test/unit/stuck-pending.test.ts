// Setup's guard against a kube-scheduler requeue race: a pod left unscheduled well after every
// claim it uses is bound is recreated; one still waiting for its claim, or young, or placed, is not.
import { expect } from "chai";
import { k8s } from "../../lib/kube/client.js";
import { recreateStuckPending, STUCK_PENDING_MS } from "../../lib/workloads/stuck-pending.js";
import { startFakeApiServer, type FakeApiServer } from "../support/fake-apiserver.js";

function pod(name: string, options: { ageMs: number; nodeName?: string; claim?: string }): k8s.V1Pod {
  return {
    metadata: { name, namespace: "ns", creationTimestamp: new Date(Date.now() - options.ageMs) },
    spec: {
      containers: [{ name: "c", image: "pause" }],
      ...(options.nodeName !== undefined ? { nodeName: options.nodeName } : {}),
      volumes: options.claim ? [{ name: "data", persistentVolumeClaim: { claimName: options.claim } }] : [],
    },
  };
}

describe("recreateStuckPending", function () {
  let api: FakeApiServer;
  const deleted: string[] = [];

  before(async function () {
    const claim = (phase: string) => () => ({
      body: { kind: "PersistentVolumeClaim", apiVersion: "v1", metadata: {}, status: { phase } },
    });
    const deletePod = (name: string) => () => {
      deleted.push(name);
      return { body: { kind: "Pod", apiVersion: "v1", metadata: { name } } };
    };
    api = await startFakeApiServer({
      "GET /api/v1/namespaces/ns/persistentvolumeclaims/data-bound": claim("Bound"),
      "GET /api/v1/namespaces/ns/persistentvolumeclaims/data-pending": claim("Pending"),
      "DELETE /api/v1/namespaces/ns/pods/stuck": deletePod("stuck"),
      "DELETE /api/v1/namespaces/ns/pods/waiting": deletePod("waiting"),
      "DELETE /api/v1/namespaces/ns/pods/young": deletePod("young"),
      "DELETE /api/v1/namespaces/ns/pods/placed": deletePod("placed"),
      "DELETE /api/v1/namespaces/ns/pods/no-claim": deletePod("no-claim"),
    });
  });

  after(async function () {
    await api.close();
  });

  it("recreates only an old, unscheduled pod whose claims are all bound", async function () {
    const old = STUCK_PENDING_MS + 5_000;
    const recreated = await recreateStuckPending(api.kc, "ns", [
      pod("stuck", { ageMs: old, claim: "data-bound" }),
      pod("waiting", { ageMs: old, claim: "data-pending" }),
      pod("young", { ageMs: 1_000, claim: "data-bound" }),
      pod("placed", { ageMs: old, nodeName: "worker-1", claim: "data-bound" }),
      pod("no-claim", { ageMs: old }),
    ]);
    expect(recreated).to.deep.equal(["stuck"]);
    expect(deleted).to.deep.equal(["stuck"]);
  });
});
