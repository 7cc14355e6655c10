import { expect } from "chai";
import { CONTAINER_STOP_MS, podStopMs, VOLUME_UNMOUNT_MS } from "../../lib/cluster/sim/kubelet/shutdown.js";
import { nextRenewalAtMs } from "../../lib/cluster/sim/kubelet/lease-renewal.js";
import type { k8s } from "../../lib/kube/client.js";

describe("sim graceful shutdown: the kubelet's pace", function () {
  it("stops a pod's containers in the runtime's time, and unmounts its claims on top", function () {
    const plain: k8s.V1Pod = { spec: { containers: [], volumes: [{ name: "tmp", emptyDir: {} }] } };
    const withClaim: k8s.V1Pod = {
      spec: {
        containers: [],
        volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data-db-0" } }],
      },
    };
    expect(podStopMs(plain)).to.equal(CONTAINER_STOP_MS);
    expect(podStopMs(withClaim)).to.equal(CONTAINER_STOP_MS + VOLUME_UNMOUNT_MS);
  });

  it("renews the Lease one interval after its last renewal, at once when that is past", function () {
    expect(nextRenewalAtMs(10_000, 2_000, 11_000)).to.equal(12_000);
    expect(nextRenewalAtMs(10_000, 2_000, 15_000)).to.equal(15_000);
  });
});
