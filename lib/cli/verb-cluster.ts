// The cluster a verb (`rekindle node …`, `rekindle up|down`) acts on, by provider: a running sim
// cluster by name, a running kind cluster by name, or an existing cluster by kubeconfig with its
// rails (the node named is the one faults are allowed on) and rekindle's node agent.
import { parseArgs } from "node:util";
import { attachKindCluster } from "../cluster/kind/attach.js";
import { ExistingCluster } from "../cluster/existing/cluster.js";
import type { FaultRailsRequest } from "../cluster/existing/rails.js";
import type { ClusterUnderTest, ProviderName } from "../cluster/provider.js";
import { SimCluster } from "../cluster/sim/cluster.js";
import { SimClusterUnderTest } from "../cluster/sim/under-test.js";
import type { Progress } from "../util/progress.js";
import { agentFaults } from "./existing-agent.js";

/** The options every verb takes to name its cluster. */
export const VERB_CLUSTER_OPTIONS = {
  provider: { type: "string" },
  name: { type: "string", default: "rekindle" },
  kubeconfig: { type: "string" },
  context: { type: "string" },
} as const;

export const VERB_CLUSTER_USAGE = `--provider sim|kind|existing (default: kind when it can run here, else sim);
      sim and kind: --name X (default rekindle); existing: --kubeconfig K --context C (as kubectl picks them)`;

export type VerbClusterValues = ReturnType<
  typeof parseArgs<{ options: typeof VERB_CLUSTER_OPTIONS; strict: true }>
>["values"];

export interface VerbClusterOptions {
  /** existing: the rails (--allow-faults and the node or nodes). Default: none (no node faults). */
  rails?: FaultRailsRequest;
  progress: Progress;
  signal: AbortSignal;
}

/** Opens (never creates) the cluster the verb names; a sim or kind cluster that is not running is bad input. */
export async function openVerbCluster(
  provider: ProviderName,
  values: VerbClusterValues,
  options: VerbClusterOptions,
): Promise<ClusterUnderTest> {
  const { progress, signal } = options;
  progress.detail?.(
    provider === "existing"
      ? `cluster: the existing one in ${values.kubeconfig ?? "$KUBECONFIG or ~/.kube/config"}, context ${values.context ?? "its current one"}`
      : `cluster: the running ${provider} cluster ${values.name}`,
  );
  switch (provider) {
    case "sim":
      // keep: the cluster outlives this command; destroy() leaves it running.
      return new SimClusterUnderTest(SimCluster.open(values.name, progress), { keep: true, progress });
    case "kind":
      return attachKindCluster(values.name, { progress, signal });
    case "existing":
      return ExistingCluster.open({
        ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
        ...(values.context !== undefined ? { context: values.context } : {}),
        ...(options.rails !== undefined ? { rails: options.rails } : {}),
        agent: (kc) => agentFaults(kc, progress),
        storage: false,
        progress,
      });
  }
}
