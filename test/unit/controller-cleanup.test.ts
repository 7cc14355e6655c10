import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import { belongsToNode, heldOnlyByFinalizers, releasablePods } from "../../lib/controller/cleanup.js";
import { untilAborted } from "../../lib/util/time.js";

function pod(name: string, extra: Partial<k8s.V1ObjectMeta> = {}, phase = "Running"): k8s.V1Pod {
  return { metadata: { name, namespace: "ns", ...extra }, status: { phase } };
}

describe("controller: what cleanup releases", function () {
  const daemon = pod("kube-proxy-x", {
    ownerReferences: [{ kind: "DaemonSet", name: "kube-proxy", apiVersion: "apps/v1", uid: "u" }],
  });
  const mirror = pod("etcd-node", { annotations: { "kubernetes.io/config.mirror": "abc" } });
  const app = pod("db-0", {
    ownerReferences: [{ kind: "StatefulSet", name: "db", apiVersion: "apps/v1", uid: "u" }],
  });
  const finished = pod("job-x", {}, "Succeeded");
  const held = pod("held", {
    deletionTimestamp: new Date(),
    deletionGracePeriodSeconds: 0,
    finalizers: ["example.com/keep"],
  });
  const graceful = pod("leaving", {
    deletionTimestamp: new Date(),
    deletionGracePeriodSeconds: 30,
    finalizers: ["example.com/keep"],
  });

  it("never deletes, counts or waits for DaemonSet and mirror pods (the node's own)", function () {
    expect(belongsToNode(daemon)).to.equal(true);
    expect(belongsToNode(mirror)).to.equal(true);
    expect(belongsToNode(app)).to.equal(false);
    expect(releasablePods([daemon, mirror, app, finished]).map((p) => p.metadata?.name)).to.deep.equal([
      "db-0",
    ]);
  });

  it("counts a force-deleted pod kept only by finalizers as released; a graceful deletion is not yet", function () {
    expect(heldOnlyByFinalizers(held)).to.equal(true);
    expect(heldOnlyByFinalizers(graceful)).to.equal(false);
    expect(heldOnlyByFinalizers(app)).to.equal(false);
  });
});

describe("util: untilAborted", function () {
  it("gives up on a call that ignores its signal when the signal aborts", async function () {
    const never = new Promise<string>(() => undefined);
    const controller = new AbortController();
    setTimeout(() => {
      controller.abort(new Error("deadline"));
    }, 20);
    let caught: unknown;
    try {
      await untilAborted(never, controller.signal);
    } catch (error) {
      caught = error;
    }
    expect((caught as Error).message).to.equal("deadline");
    expect(await untilAborted(Promise.resolve("done"), new AbortController().signal)).to.equal("done");
  });
});
