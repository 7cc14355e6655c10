// Where the CLI gets node faults for a cluster rekindle did not create: rekindle's node agent
// (lib/agent/, `rekindle agent install`), asked only when faults are allowed there (--allow-faults).
import { agentNodeFaults } from "../agent/capabilities.js";
import { AGENT_NAMESPACE } from "../agent/protocol.js";
import type { ExistingNodeFaults, NodeFaultLocator } from "../cluster/provider.js";
import { RekindleError } from "../errors.js";
import type { k8s } from "../kube/client.js";
import type { Progress } from "../util/progress.js";

export interface AgentFaults {
  nodeFaults: ExistingNodeFaults;
  faultLocator: NodeFaultLocator;
}

/**
 * The agent's capabilities for the cluster `kc` reaches, and the locator its journal records carry
 * (so `rekindle reap` reverts through the agent too). Throws RekindleError (PRECONDITION, with the
 * `rekindle agent install` hint) when the agent is not installed and Ready there.
 */
export async function agentFaults(kc: k8s.KubeConfig, progress: Progress): Promise<AgentFaults> {
  let nodeFaults: ExistingNodeFaults;
  try {
    nodeFaults = await agentNodeFaults(kc, { namespace: AGENT_NAMESPACE, progress });
  } catch (error) {
    // --allow-faults on a cluster without the agent asks for what cannot be done: bad input (exit 2).
    if (error instanceof RekindleError && error.code === "PRECONDITION")
      throw new RekindleError(
        "INVALID_INPUT",
        `--allow-faults needs rekindle's node agent: ${error.message}`,
        {
          ...(error.hint !== undefined ? { hint: error.hint } : {}),
          cause: error,
        },
      );
    throw error;
  }
  return { nodeFaults, faultLocator: { provider: "existing", agentNamespace: AGENT_NAMESPACE } };
}
