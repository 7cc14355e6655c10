// The sim's eviction manager under MemoryPressure (lib/cluster/sim/kubelet/pressure.ts), against a stand-in
// API server: as on kind (issue 23, a kubelet at V(3)), a Burstable replacement bound to the node
// after the first eviction is admitted (admission refuses only BestEffort pods) and ranked first at
// the next look, before it has started (a pod without stats goes first); it is ended and deleted
// at once, and only then does the Guaranteed pod go. The sim used to rank only started pods and
// went straight on to the Guaranteed pod.
import { expect } from "chai";
import { SimEvictionManager } from "../../lib/cluster/sim/kubelet/pressure.js";
import { SIM_USAGE_ANNOTATION } from "../../lib/kube/eviction-order.js";
import { until } from "../support/until.js";
import { list, startFakeApiServer, type FakeApiServer, type FakeRoutes } from "../support/fake-apiserver.js";

const NODE = "n1";
const NAMESPACE = "w";

interface StandInPod {
  metadata: { name: string; namespace: string; uid: string; annotations?: Record<string, string> };
  spec: { nodeName: string; containers: { name: string; resources: { requests: Record<string, string> } }[] };
  status: { phase: string; containerStatuses?: unknown[] };
}

function pod(name: string, request: string, options: { started: boolean; usage?: string }): StandInPod {
  return {
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: `uid-${name}`,
      ...(options.usage ? { annotations: { [SIM_USAGE_ANNOTATION]: `memory=${options.usage}` } } : {}),
    },
    spec: { nodeName: NODE, containers: [{ name: "c", resources: { requests: { memory: request } } }] },
    status: options.started
      ? {
          phase: "Running",
          containerStatuses: [
            { name: "c", ready: true, restartCount: 0, image: "i", imageID: "", state: { running: {} } },
          ],
        }
      : { phase: "Pending" },
  };
}

describe("sim eviction manager: a replacement admitted under MemoryPressure goes before it starts", function () {
  this.timeout(20_000);
  const pods = new Map<string, StandInPod>();
  const ended: string[] = [];
  const deleted: string[] = [];
  let api: FakeApiServer;
  const node = {
    metadata: { name: NODE },
    status: {
      conditions: [{ type: "MemoryPressure", status: "False", reason: "KubeletHasSufficientMemory" }],
    },
  };

  before(async function () {
    const routes: FakeRoutes = {
      "GET /api/v1/pods": () => list("PodList", [...pods.values()]),
      [`GET /api/v1/nodes/${NODE}/status`]: () => ({ body: node }),
      // The stand-in does not read bodies: a write of the node's status is answered with it as it is.
      [`PUT /api/v1/nodes/${NODE}/status`]: () => ({ body: node }),
    };
    for (const name of ["burstable-1", "burstable-2", "guaranteed-1"]) {
      const path = `/api/v1/namespaces/${NAMESPACE}/pods/${name}`;
      const current = () => pods.get(name);
      routes[`GET ${path}/status`] = () => ({ body: current() });
      // The only status the sim writes to a pod is its end (terminatePod): Failed.
      routes[`PUT ${path}/status`] = () => {
        const p = current();
        if (p) {
          p.status = { phase: "Failed" };
          ended.push(name);
        }
        return { body: p };
      };
      routes[`DELETE ${path}`] = () => {
        const p = current();
        pods.delete(name);
        deleted.push(name);
        return { body: p };
      };
    }
    api = await startFakeApiServer(routes);
  });

  after(async function () {
    await api.close();
  });

  it("evicts the Burstable pod, then its not-started replacement (deleted), then the Guaranteed pod", async function () {
    pods.set("burstable-1", pod("burstable-1", "100Mi", { started: true, usage: "300Mi" }));
    pods.set("guaranteed-1", pod("guaranteed-1", "200Mi", { started: true, usage: "100Mi" }));
    const manager = await SimEvictionManager.start(
      api.kc,
      NODE,
      "memory",
      {
        monitoringIntervalMs: 200,
        statusUpdateIntervalMs: 200,
        pressureTransitionPeriodMs: 60_000,
        shutdownGracePeriodMs: 0,
      },
      { faultPhase: "random" },
    );
    try {
      await until(() => ended.length > 0, "the first eviction", { timeoutMs: 10_000, intervalMs: 10 });
      expect(ended).to.deep.equal(["burstable-1"]);
      // Its ReplicaSet's replacement, bound to the node before the NoSchedule taint; KWOK has not
      // started it yet (the stand-in never does).
      pods.set("burstable-2", pod("burstable-2", "100Mi", { started: false }));
      await until(() => ended.includes("guaranteed-1"), "the Guaranteed pod's eviction", {
        timeoutMs: 10_000,
        intervalMs: 10,
      });
      expect(ended).to.deep.equal(["burstable-1", "burstable-2", "guaranteed-1"]);
      expect(deleted, "a victim that never started is deleted, as KWOK would start it").to.deep.equal([
        "burstable-2",
      ]);
    } finally {
      await manager.stop();
    }
  });
});
