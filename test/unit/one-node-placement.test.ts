// The node-pressure pods' placement (lib/workloads/one-node-placement.ts) against a stand-in API
// server: the pods are placed only once a blocker is bound to every node but the target, and the
// blockers are gone before it returns, also when the placement failed. (That the scheduler then
// keeps the pods off the blocked nodes is the sim's and kind's part: the node-pressure suites.)
import { expect } from "chai";
import type { IncomingMessage } from "node:http";
import { placeOnOneNode } from "../../lib/workloads/one-node-placement.js";
import { list, startFakeApiServer, type FakeApiServer } from "../support/fake-apiserver.js";

const DS_PATH = "/apis/apps/v1/namespaces/ns/daemonsets/pressure-blocker";

interface World {
  api: FakeApiServer;
  /** What happened, in order: "applied", "bound 1", "deleted", "gone"… */
  log: string[];
  /** The blocker DaemonSet as rekindle applied it. */
  applied: () => Record<string, unknown>;
}

/** An API server whose DaemonSet wants blockers on worker-2 and worker-3, bound one per pod list. */
async function world(): Promise<World> {
  const log: string[] = [];
  let body = "";
  let bound = 0;
  let deleted = false;
  const blocker = (node: string) => ({ metadata: { name: `b-${node}` }, spec: { nodeName: node } });
  const api = await startFakeApiServer({
    "GET /apis/apps/v1": () => ({
      body: {
        kind: "APIResourceList",
        groupVersion: "apps/v1",
        resources: [{ name: "daemonsets", namespaced: true, kind: "DaemonSet", verbs: ["patch", "get"] }],
      },
    }),
    [`PATCH ${DS_PATH}`]: (req: IncomingMessage) => {
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      log.push("applied");
      return { body: { kind: "DaemonSet", apiVersion: "apps/v1", metadata: { name: "pressure-blocker" } } };
    },
    [`GET ${DS_PATH}`]: () => ({
      body: {
        kind: "DaemonSet",
        apiVersion: "apps/v1",
        metadata: { name: "pressure-blocker", generation: 1 },
        status: { observedGeneration: 1, desiredNumberScheduled: 2 },
      },
    }),
    [`DELETE ${DS_PATH}`]: () => {
      deleted = true;
      log.push("deleted");
      return { body: { kind: "Status", apiVersion: "v1", status: "Success" } };
    },
    "GET /api/v1/namespaces/ns/pods": () => {
      if (deleted) {
        log.push("gone");
        return list("PodList", []);
      }
      bound = Math.min(2, bound + 1);
      log.push(`bound ${bound}`);
      return list("PodList", ["worker-2", "worker-3"].slice(0, bound).map(blocker));
    },
  });
  return { api, log, applied: () => JSON.parse(body) as Record<string, unknown> };
}

describe("placing the pressure pods on one node", function () {
  let w: World | undefined;

  afterEach(async function () {
    await w?.api.close();
    w = undefined;
  });

  it("places once every other node holds a bound blocker, and returns after the blockers are gone", async function () {
    w = await world();
    const { api, log } = w;
    const placed = await placeOnOneNode({ kc: api.kc, namespace: "ns", node: "worker-1", labels: {} }, () => {
      log.push("place");
      return Promise.resolve("on worker-1");
    });
    expect(placed).to.equal("on worker-1");
    expect(log).to.deep.equal(["applied", "bound 1", "bound 2", "place", "deleted", "gone"]);
    const affinity = JSON.stringify(w.applied());
    expect(affinity).to.include('"operator":"NotIn","values":["worker-1"]');
    expect(affinity).to.include('"namespace":"ns"');
  });

  it("removes the blockers when the placement fails, and reports the placement's error", async function () {
    w = await world();
    const { api, log } = w;
    const failed = await placeOnOneNode({ kc: api.kc, namespace: "ns", node: "worker-1", labels: {} }, () =>
      Promise.reject(new Error("pod elsewhere")),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(failed)).to.include("pod elsewhere");
    expect(log.slice(-2)).to.deep.equal(["deleted", "gone"]);
  });
});
