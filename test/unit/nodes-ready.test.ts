// The wait for nodes to be usable (lib/kube/nodes-ready.ts), which both providers do before a
// scenario: Ready=True and the registration-time not-ready taint lifted, every named node.
import { expect } from "chai";
import type { k8s } from "../../lib/kube/client.js";
import { isNodeUsable, waitForNodesReady } from "../../lib/kube/nodes-ready.js";
import { rekindleRejection } from "../support/assertions.js";
import { list, startFakeApiServer } from "../support/fake-apiserver.js";

function node(name: string, ready: string, taints: string[] = []): k8s.V1Node {
  return {
    metadata: { name },
    spec: { taints: taints.map((key) => ({ key, effect: "NoSchedule" })) },
    status: { conditions: [{ type: "Ready", status: ready }] },
  };
}

const NOT_READY = "node.kubernetes.io/not-ready";

describe("waiting for nodes to be usable", function () {
  it("a node is usable once Ready and no longer tainted not-ready", function () {
    expect(isNodeUsable(node("w", "False", [NOT_READY]))).to.equal(false);
    expect(isNodeUsable(node("w", "True", [NOT_READY]))).to.equal(false);
    expect(isNodeUsable(node("w", "True"))).to.equal(true);
    expect(isNodeUsable(node("w", "True", ["node.kubernetes.io/memory-pressure"]))).to.equal(true);
  });

  it("returns once every named node is usable, as kind's workers turn Ready one by one", async function () {
    // As a fresh kind cluster showed (issue 23): all tainted, then Ready but tainted, then untainted.
    const states = [
      [node("w1", "False", [NOT_READY]), node("w2", "False", [NOT_READY])],
      [node("w1", "True"), node("w2", "True", [NOT_READY])],
      [node("w1", "True"), node("w2", "True"), node("cp", "True")],
    ];
    let calls = 0;
    const api = await startFakeApiServer({
      "GET /api/v1/nodes": () => list("NodeList", states[Math.min(calls++, states.length - 1)] ?? []),
    });
    try {
      await waitForNodesReady(api.kc, ["w1", "w2"], { timeoutMs: 10_000, intervalMs: 10 });
      expect(calls).to.equal(3);
    } finally {
      await api.close();
    }
  });

  it("times out naming the nodes when one never turns usable", async function () {
    const api = await startFakeApiServer({
      "GET /api/v1/nodes": () => list("NodeList", [node("w1", "True"), node("w2", "True", [NOT_READY])]),
    });
    try {
      const error = await rekindleRejection(
        waitForNodesReady(api.kc, ["w1", "w2"], { timeoutMs: 100, intervalMs: 10 }),
      );
      expect(error.code).to.equal("TIMEOUT");
      expect(error.message).to.include("nodes w1, w2 to be Ready");
    } finally {
      await api.close();
    }
  });
});
