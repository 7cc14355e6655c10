import { expect } from "chai";
import { parse } from "yaml";
import { readFileSync } from "node:fs";
import type { k8s } from "../../lib/kube/client.js";
import {
  evictionCandidate,
  kubeletEvictionOrder,
  nextEvictionVictim,
  simulatedUsageBytes,
  type EvictionCandidate,
} from "../../lib/kube/eviction-order.js";
import { parseQuantity } from "../../lib/kube/quantity.js";
import { substitute } from "../../lib/kube/apply.js";
import { RekindleError } from "../../lib/errors.js";
import { deployPath } from "../../lib/util/project-files.js";
import { PRESSURE_APPS } from "../../suites/node-pressure.js";

const Mi = 2 ** 20;

function candidate(name: string, over: Partial<EvictionCandidate>): EvictionCandidate {
  return { namespace: "ns", name, priority: 0, requestBytes: 0, usageBytes: 0, ...over };
}

describe("kubelet eviction order", function () {
  it("parses quantities in binary and decimal units", function () {
    expect(parseQuantity("64Mi")).to.equal(64 * Mi);
    expect(parseQuantity("1G")).to.equal(1e9);
    expect(parseQuantity("500m")).to.equal(0.5);
    expect(parseQuantity("1e3")).to.equal(1000);
    expect(() => parseQuantity("12 apples")).to.throw(RekindleError, 'resource quantity "12 apples"');
  });

  it("evicts over-request pods first, then by priority, then by usage above request", function () {
    const order = kubeletEvictionOrder([
      candidate("guaranteed", { requestBytes: 128 * Mi, usageBytes: 32 * Mi }),
      candidate("critical-over", { priority: 2_000_000_000, requestBytes: 0, usageBytes: 10 * Mi }),
      candidate("besteffort-small", { usageBytes: 10 * Mi }),
      candidate("burstable", { requestBytes: 64 * Mi, usageBytes: 32 * Mi }),
      candidate("besteffort-big", { usageBytes: 300 * Mi }),
      candidate("high-within", { priority: 1000, requestBytes: 64 * Mi, usageBytes: 60 * Mi }),
    ]).map((c) => c.name);
    expect(order).to.deep.equal([
      "besteffort-big",
      "besteffort-small",
      "critical-over",
      "burstable",
      "guaranteed",
      "high-within",
    ]);
  });

  it("ranks the pressure fixture's pods BestEffort, Burstable, Guaranteed for memory and disk", function () {
    const text = substitute(readFileSync(deployPath("workloads", "pressure.yaml"), "utf8"), {
      NAMESPACE: "ns",
      NODE: "n",
    });
    const pods = text.split(/^---$/m).map((doc) => {
      const deployment = parse(doc) as k8s.V1Deployment;
      const template = deployment.spec?.template;
      const pod: k8s.V1Pod = {
        metadata: { ...template?.metadata, name: deployment.metadata?.name },
        spec: template?.spec,
      };
      return pod;
    });
    for (const resource of ["memory", "ephemeral-storage"] as const) {
      const order = kubeletEvictionOrder(
        pods.map((p) => evictionCandidate(p, resource, simulatedUsageBytes(p, resource))),
      ).map((c) => c.name);
      expect(order, resource).to.deep.equal([...PRESSURE_APPS]);
    }
  });

  it("ranks an admitted pod that has not started (no stats yet) first, and skips ended and critical ones", function () {
    const pod = (
      name: string,
      over: { started?: boolean; phase?: string; priority?: number; requestMi?: number },
    ) => ({
      metadata: { namespace: "ns", name, annotations: { "rekindle.dev/sim-usage": "memory=32Mi" } },
      spec: {
        ...(over.priority !== undefined ? { priority: over.priority } : {}),
        containers: [
          {
            name: "app",
            ...(over.requestMi !== undefined
              ? { resources: { requests: { memory: `${over.requestMi}Mi` } } }
              : {}),
          },
        ],
      },
      status: {
        phase: over.phase ?? (over.started === false ? "Pending" : "Running"),
        ...(over.started === false
          ? {}
          : { containerStatuses: [{ name: "app", image: "x", imageID: "", ready: true, restartCount: 0 }] }),
      },
    });
    const bestEffort = pod("besteffort", {});
    const replacement = pod("burstable-replacement", { started: false, requestMi: 64 });
    const guaranteed = pod("guaranteed", { requestMi: 128 });
    expect(nextEvictionVictim([guaranteed, bestEffort, replacement], "memory")).to.include({
      name: "burstable-replacement",
      noStats: true,
    });
    const evicted = pod("burstable-evicted", { phase: "Failed", requestMi: 64 });
    const critical = pod("kube-proxy", { priority: 2_000_001_000 });
    expect(nextEvictionVictim([evicted, critical, guaranteed], "memory")?.name).to.equal("guaranteed");
    expect(nextEvictionVictim([evicted, critical], "memory")).to.equal(undefined);
  });
});
