import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import { belongsToNode, heldOnlyByFinalizers, releasablePods } from "../../lib/controller/cleanup.js";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { boundedSignal } from "../../lib/util/abort.js";
import { untilAborted } from "../../lib/util/time.js";

function pod(name: string, extra: Partial<k8s.V1ObjectMeta> = {}, phase = "Running"): k8s.V1Pod {
  return { metadata: { name, namespace: "ns", ...extra }, status: { phase } };
}

describe("controller: what cleanup releases", function () {
  const daemon = pod("kube-proxy-x", {
    ownerReferences: [
      { kind: "DaemonSet", name: "kube-proxy", apiVersion: "apps/v1", uid: "u", controller: true },
    ],
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

describe("util: boundedSignal", function () {
  it("aborts at its timeout even after a garbage collection (AbortSignal.any with a timeout did not, on Node 20)", async function () {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const { signal } = boundedSignal(new AbortController().signal, 100, "the test call");
    gc();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(signal.aborted).to.equal(true);
    expect((signal.reason as Error).message).to.equal("the test call abandoned after 100 ms");
  });

  it("aborts with its parent, and a disposed one never times out", async function () {
    const parent = new AbortController();
    const child = boundedSignal(parent.signal, 60_000, "x");
    parent.abort(new Error("leadership lost"));
    expect((child.signal.reason as Error).message).to.equal("leadership lost");
    child.dispose();
    const quiet = boundedSignal(new AbortController().signal, 50, "y");
    quiet.dispose();
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(quiet.signal.aborted).to.equal(false);
  });
});
