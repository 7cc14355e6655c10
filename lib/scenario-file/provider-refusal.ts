// What a provider cannot do for a scenario file, known before any cluster exists: each reason names
// the part of the file (a fault, a workload, a cluster key) and why. The capabilities here mirror
// what the providers declare once started (`capabilities`/`unsupported` of SimClusterUnderTest in
// lib/cluster/sim/under-test.ts, KindCluster in lib/cluster/kind/cluster.ts and ExistingCluster in
// lib/cluster/existing/cluster.ts); kind may lose some at start when its node image cannot do them.
import type { NodeCapability, ProviderName } from "../cluster/provider.js";
import type { FaultType, ScenarioFile } from "./types.js";

/** The capability a cluster needs to inject each fault type. */
export const FAULT_CAPABILITY: Readonly<Record<FaultType, NodeCapability>> = {
  stop: "lifecycle",
  partition: "partition",
  "graceful-shutdown": "graceful-shutdown",
  "memory-pressure": "pressure",
  "disk-pressure": "pressure",
};

/** Faults on clusters rekindle did not create are issue 22; until then the existing provider offers none. */
const HANDS_OFF =
  "rekindle never does to a cluster it did not create what it cannot undo (node faults on such clusters are not built yet); use provider sim or kind";

/** Capabilities each provider lacks before it starts, with the reason (only those a file can need). */
const LACKS: Readonly<Record<ProviderName, Partial<Record<NodeCapability, string>>>> = {
  sim: {},
  kind: {},
  existing: {
    lifecycle: HANDS_OFF,
    partition: HANDS_OFF,
    pressure: HANDS_OFF,
    "graceful-shutdown": HANDS_OFF,
    fencing: HANDS_OFF,
  },
};

/**
 * Why a provider cannot probe a workload from inside the cluster (lib/workloads/prober.ts runs the
 * probe from a pod on a control-plane node, from an image the nodes already hold).
 */
const PROBE_REFUSALS: Readonly<Partial<Record<ProviderName, string>>> = {
  sim: "the sim's pods run no containers (KWOK nodes) and its control plane runs as host processes, so nothing would answer the probe and there is no in-cluster place to probe from; use provider kind",
  existing:
    "in-cluster probes run from a pod on a control-plane node with rekindle's kind userland image, which a cluster rekindle did not create does not hold (probing there is not built yet); use provider kind",
};

/**
 * Why a provider cannot run the writer workload a neverTwoWriters budget needs (its image is loaded
 * into kind's nodes, and its log read from the volumes' backing store every kind worker shares).
 */
const WRITER_REFUSALS: Readonly<Partial<Record<ProviderName, string>>> = {
  sim: "the sim's pods run no containers (KWOK nodes), so no writer would write and its log would prove nothing; use provider kind",
  existing:
    "the writer's image and its log's backing store are kind's (loaded into rekindle's kind nodes, read from the directory they share), which a cluster rekindle did not create does not hold; use provider kind",
  // Refused rather than passed unchecked: a budget whose milestone no run can mark would always pass.
  kind: "running the writer beside the workload and reading its log back after the scenario is not wired into kind runs yet (the writer, its image and the log's check exist), so the budget could only pass unchecked",
};

/** One reason, at the JSON pointer of the part of the file it is about. */
export interface Refusal {
  pointer: string;
  reason: string;
}

/** Every reason `provider` cannot run `file`, each at the part of the file it is about. */
export function providerRefusals(file: ScenarioFile, provider: ProviderName): Refusal[] {
  const refusals: Refusal[] = [];
  const lacks = LACKS[provider];
  const capability = FAULT_CAPABILITY[file.fault.type];
  const faultReason = lacks[capability];
  if (faultReason !== undefined) {
    refusals.push({
      pointer: "/spec/fault/type",
      reason: `fault ${file.fault.type}: provider ${provider} cannot inject it (no ${capability} capability): ${faultReason}`,
    });
  }
  const fencing = lacks.fencing;
  if (file.controller.enabled && fencing !== undefined) {
    refusals.push({
      pointer: "/spec/controller/enabled",
      reason: `the controller: provider ${provider} cannot fence nodes for it: ${fencing}`,
    });
  }
  file.workloads.forEach((workload, index) => {
    if (workload.source.kind === "deployed" && provider !== "existing") {
      refusals.push({
        pointer: `/spec/workloads/${index}/deployed`,
        reason: `workload ${workload.name} is already deployed: only provider existing runs against workloads rekindle did not deploy (provider ${provider} creates its own cluster)`,
      });
    }
    const probeReason = PROBE_REFUSALS[provider];
    if (workload.probe !== undefined && probeReason !== undefined) {
      refusals.push({
        pointer: `/spec/workloads/${index}/probe`,
        reason: `workload ${workload.name} has a probe: ${probeReason}`,
      });
    }
  });
  const writerReason = WRITER_REFUSALS[provider];
  file.budgets.forEach((budget, index) => {
    if (budget.neverTwoWriters === true && writerReason !== undefined) {
      refusals.push({
        pointer: `/spec/budgets/${index}/neverTwoWriters`,
        reason: `budget neverTwoWriters of workload ${budget.workload}: provider ${provider} cannot run the writer workload: ${writerReason}`,
      });
    }
  });
  refusals.push(...clusterRefusals(file, provider));
  return refusals;
}

function clusterRefusals(file: ScenarioFile, provider: ProviderName): Refusal[] {
  const refusals: Refusal[] = [];
  const { cluster } = file;
  if (provider === "existing") {
    const fixed = "provider existing uses the cluster as it is";
    if (cluster.workers !== undefined)
      refusals.push({
        pointer: "/spec/cluster/workers",
        reason: `cluster.workers: ${fixed}; it cannot add or remove nodes`,
      });
    if (cluster.zones !== undefined)
      refusals.push({
        pointer: "/spec/cluster/zones",
        reason: `cluster.zones: ${fixed}; it cannot relabel nodes`,
      });
    if (cluster.knobs !== undefined)
      refusals.push({
        pointer: "/spec/cluster/knobs",
        reason: `cluster.knobs: ${fixed}; it cannot change its control plane's or kubelets' settings (cluster.profile says which timings it runs with)`,
      });
  }
  if (cluster.podsPerNode !== undefined && provider !== "sim")
    refusals.push({
      pointer: "/spec/cluster/podsPerNode",
      reason: `cluster.podsPerNode: filler pods are for the sim's shared-kwok workers; provider ${provider} has none`,
    });
  if (cluster.kindConfig !== undefined && provider !== "kind") {
    refusals.push({
      pointer: "/spec/cluster/kindConfig",
      reason: `cluster.kindConfig configures a kind cluster; provider ${provider} takes none`,
    });
  }
  return refusals;
}

/** The reasons `provider` cannot run `file`, known without a cluster; empty when it can. */
export function providerRefusal(file: ScenarioFile, provider: ProviderName): string[] {
  return providerRefusals(file, provider).map((refusal) => refusal.reason);
}
