// Where the CLI gets node faults for a cluster rekindle did not create: rekindle's node agent
// (lib/agent/, `rekindle agent install`). Until the agent is wired in here, there are none, and
// the existing provider says so in place of each node fault.
import type { ExistingNodeFaults, NodeFaultLocator } from "../cluster/provider.js";
import type { k8s } from "../kube/client.js";
import type { Progress } from "../util/progress.js";

export interface AgentFaults {
  nodeFaults: ExistingNodeFaults;
  faultLocator: NodeFaultLocator;
}

/**
 * The agent's capabilities for the cluster `kc` reaches; undefined: no agent in this build.
 * (The lead wires lib/agent/capabilities.ts agentNodeFaults in here at merge.)
 */
export function agentFaults(_kc: k8s.KubeConfig, _progress: Progress): Promise<AgentFaults | undefined> {
  return Promise.resolve(undefined);
}
