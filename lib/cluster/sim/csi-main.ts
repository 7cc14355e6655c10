// Process entry of the sim CSI provisioner (started by SimCluster as the "sim-csi" component).
import { parseArgs } from "node:util";
import { loadKubeConfig } from "../../kube/client.js";
import { runCsiProvisioner } from "./csi-provisioner.js";

const { values } = parseArgs({ options: { kubeconfig: { type: "string" }, driver: { type: "string" } } });
if (!values.kubeconfig || !values.driver) {
  process.stderr.write("usage: csi-main --kubeconfig=PATH --driver=NAME\n");
  process.exit(2);
}
const controller = new AbortController();
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    controller.abort();
  });
}
await runCsiProvisioner(loadKubeConfig(values.kubeconfig), {
  driver: values.driver,
  signal: controller.signal,
  log: (m) => process.stdout.write(`${new Date().toISOString()} ${m}\n`),
});
