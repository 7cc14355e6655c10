// A fake API server's fleet of Ready nodes and their Leases, for the controller's unit tests.
import { list, type FakeRoutes } from "./fake-apiserver.js";

/** Node `name`'s Lease in kube-node-lease, held by the node, last renewed at `renewedAtMs`. */
export function fleetLease(name: string, renewedAtMs: number) {
  return {
    metadata: { name, namespace: "kube-node-lease" },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new Date(renewedAtMs).toISOString() },
  };
}

/** The Node and Lease lists of `nodes()` (read at each request): every node Ready, its Lease `lease(name)`. */
export function readyFleetRoutes(
  nodes: () => readonly string[],
  lease: (name: string) => unknown,
): FakeRoutes {
  return {
    "GET /api/v1/nodes": () =>
      list(
        "NodeList",
        nodes().map((name) => ({
          metadata: { name, uid: `uid-${name}` },
          status: { conditions: [{ type: "Ready", status: "True" }] },
        })),
      ),
    "GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases": () =>
      list("LeaseList", nodes().map(lease)),
  };
}
