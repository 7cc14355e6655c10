// The agent pod's entry point (deploy/agent/daemonset.yaml runs it in the rekindle image):
// node name and namespace from the environment, in-cluster credentials, the host's shell.
import { errorMessage } from "../errors.js";
import { k8s } from "../kube/client.js";
import { AgentDaemon } from "./daemon.js";
import { NODE_STATE_DIR, nsenterShell } from "./node-ops.js";
import { AGENT_NAMESPACE } from "./protocol.js";

const node = process.env["NODE_NAME"];
if (node === undefined || node === "") {
  process.stderr.write("rekindle agent: NODE_NAME is not set (the DaemonSet sets it from spec.nodeName)\n");
  process.exit(2);
}
const kc = new k8s.KubeConfig();
kc.loadFromCluster();
const controller = new AbortController();
for (const signal of ["SIGTERM", "SIGINT"] as const)
  process.on(signal, () => {
    controller.abort();
  });
const daemon = new AgentDaemon({
  kc,
  node,
  namespace: process.env["AGENT_NAMESPACE"] ?? AGENT_NAMESPACE,
  stateDir: process.env["AGENT_STATE_DIR"] ?? NODE_STATE_DIR,
  shell: nsenterShell,
  podUid: process.env["POD_UID"] ?? "",
});
try {
  await daemon.run(controller.signal);
} catch (error) {
  process.stderr.write(`rekindle agent: ${errorMessage(error)}\n`);
  process.exit(3);
}
