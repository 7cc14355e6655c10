// providerRefusal (lib/scenario-file/provider-refusal.ts): what a provider cannot do for a file,
// known before a cluster exists, each reason naming the part of the file and why.
import { expect } from "chai";
import { providerRefusal } from "../../lib/scenario-file/provider-refusal.js";
import { FAULT_TYPES, type ScenarioFile, type WorkloadSpec } from "../../lib/scenario-file/types.js";

function file(overrides: Partial<ScenarioFile> = {}): ScenarioFile {
  return {
    path: "/scenarios/s.yaml",
    name: "s",
    cluster: {},
    workloads: [{ name: "web", source: { kind: "manifests", paths: ["/scenarios/web.yaml"] } }],
    fault: { type: "stop", target: { kind: "workload", workload: "web" } },
    controller: { enabled: false },
    budgets: [],
    repeat: 1,
    positions: new Map(),
    ...overrides,
  };
}

const DEPLOYED: WorkloadSpec = {
  name: "db",
  source: { kind: "deployed", namespace: "prod", matchLabels: { app: "db" } },
};
const PROBED: WorkloadSpec = {
  name: "api",
  source: { kind: "kustomize", path: "/scenarios/api" },
  probe: { kind: "http", port: 8080, path: "/" },
};

describe("scenario files: providerRefusal", function () {
  it("lets sim and kind inject every fault type, with the controller", function () {
    for (const type of FAULT_TYPES) {
      const durationMs = type === "stop" || type === "graceful-shutdown" ? undefined : 30_000;
      const scenario = file({
        fault: { type, target: { kind: "zone", zone: "zone-a" }, ...(durationMs ? { durationMs } : {}) },
        controller: { enabled: true },
        cluster: { workers: 4, zones: 2, knobs: { nodeMonitorGracePeriodMs: 20_000 } },
      });
      expect(providerRefusal(scenario, "sim"), type).to.deep.equal([]);
      expect(providerRefusal(scenario, "kind"), type).to.deep.equal([]);
    }
  });

  it("refuses every fault on existing, naming the fault, the capability and the reason", function () {
    const capability = {
      stop: "lifecycle",
      partition: "partition",
      "graceful-shutdown": "graceful-shutdown",
      "memory-pressure": "pressure",
      "disk-pressure": "pressure",
    } as const;
    for (const type of FAULT_TYPES) {
      const reasons = providerRefusal(
        file({ fault: { type, target: { kind: "workload", workload: "web" } } }),
        "existing",
      );
      expect(reasons).to.have.length(1);
      expect(reasons[0]).to.equal(
        `fault ${type}: provider existing cannot inject it (no ${capability[type]} capability): rekindle never does to a cluster it did not create what it cannot undo (node faults on such clusters are not built yet); use provider sim or kind`,
      );
    }
  });

  it("refuses on existing the controller (no fencing) and cluster keys it cannot honour", function () {
    const reasons = providerRefusal(
      file({
        controller: { enabled: true },
        cluster: { workers: 3, zones: 1, knobs: {}, kindConfig: "/scenarios/kind.yaml", profile: "fast" },
      }),
      "existing",
    );
    expect(reasons.slice(1).map((r) => r.split(":")[0])).to.deep.equal([
      "the controller",
      "cluster.workers",
      "cluster.zones",
      "cluster.knobs",
      "cluster.kindConfig configures a kind cluster; provider existing takes none",
    ]);
  });

  it("runs workloads already deployed on existing only", function () {
    const scenario = file({
      workloads: [DEPLOYED],
      fault: { type: "stop", target: { kind: "workload", workload: "db" } },
    });
    for (const provider of ["sim", "kind"] as const) {
      expect(providerRefusal(scenario, provider)).to.deep.equal([
        `workload db is already deployed: only provider existing runs against workloads rekindle did not deploy (provider ${provider} creates its own cluster)`,
      ]);
    }
    expect(providerRefusal(scenario, "existing").join("\n")).to.not.include("already deployed");
  });

  it("refuses a probe and a kind config on the sim, whose pods run no containers; a probe on existing", function () {
    const scenario = file({ workloads: [PROBED], cluster: { kindConfig: "/scenarios/kind.yaml" } });
    expect(providerRefusal(scenario, "sim")).to.deep.equal([
      "workload api has a probe: the sim's pods run no containers (KWOK nodes) and its control plane runs as host processes, so nothing would answer the probe and there is no in-cluster place to probe from; use provider kind",
      "cluster.kindConfig configures a kind cluster; provider sim takes none",
    ]);
    expect(providerRefusal(scenario, "kind")).to.deep.equal([]);
    expect(providerRefusal(file({ workloads: [PROBED] }), "existing").join("\n")).to.include(
      "workload api has a probe: in-cluster probes run from a pod on a control-plane node with rekindle's kind userland image",
    );
  });
});
