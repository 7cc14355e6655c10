// Test helper process: applies a fault through rekindle's node agent with a short deadline, prints
// "APPLIED", then waits to be SIGKILLed (the agent must revert at the deadline by itself).
// usage: hold-agent-fault <kubeconfig> <node> <stop|partition> <deadlineMs>
import { agentNodeFaults } from "../../lib/agent/capabilities.js";
import { loadKubeConfig } from "../../lib/kube/client.js";

const [kubeconfig, node, action, deadline] = process.argv.slice(2);
if (kubeconfig === undefined || node === undefined || deadline === undefined)
  throw new Error("usage: hold-agent-fault <kubeconfig> <node> <stop|partition> <deadlineMs>");
const faults = await agentNodeFaults(loadKubeConfig(kubeconfig), { deadlineMs: Number(deadline) });
if (action === "stop") await faults.lifecycle.stopNode(node);
else await faults.partition.partitionNode(node);
process.stdout.write("APPLIED\n");
setInterval(() => undefined, 60_000);
