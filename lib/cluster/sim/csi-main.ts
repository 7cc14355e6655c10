// Process entry of the sim CSI driver (started by SimCluster as the "sim-csi" component): the
// provisioner, and the kubelets' volumesInUse reports for the nodes whose kwok runs (from the
// cluster's state file, which every node stop, start, partition and heal rewrites).
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { loadKubeConfig } from "../../kube/client.js";
import { runCsiProvisioner } from "../../kube/csi-provisioner.js";
import { readSimState } from "./state.js";
import { nodeProcessRunning } from "./status.js";
import { runVolumesInUseReporter } from "./volumes-in-use.js";

const { values } = parseArgs({
  options: { kubeconfig: { type: "string" }, driver: { type: "string" }, state: { type: "string" } },
});
if (!values.kubeconfig || !values.driver) {
  process.stderr.write("usage: csi-main --kubeconfig=PATH --driver=NAME [--state=STATE_FILE]\n");
  process.exit(2);
}
const controller = new AbortController();
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    controller.abort();
  });
}
const log = (m: string) => process.stdout.write(`${new Date().toISOString()} ${m}\n`);
const kc = loadKubeConfig(values.kubeconfig);
const stateFile = values.state;

/** Nodes whose kwok process runs and is not frozen: the only kubelets that can report anything. */
function liveNodes(): string[] {
  if (!stateFile || !existsSync(stateFile)) return [];
  try {
    const state = readSimState(stateFile);
    return state.nodes
      .filter((n) => n.power === "running" && nodeProcessRunning(state, n))
      .map((n) => n.name);
  } catch {
    return []; // Mid-rename or gone: report nothing this pass.
  }
}

/** Every 0.5 s, as always; every 2 s on a cluster of more than 100 workers (each pass lists every node and pod). */
function reportIntervalMs(): number {
  if (!stateFile || !existsSync(stateFile)) return 500;
  try {
    return readSimState(stateFile).nodes.length > 100 ? 2_000 : 500;
  } catch {
    return 500;
  }
}

await Promise.all([
  runCsiProvisioner(kc, { driver: values.driver, signal: controller.signal, log }),
  ...(stateFile
    ? [
        runVolumesInUseReporter(kc, {
          liveNodes,
          intervalMs: reportIntervalMs(),
          signal: controller.signal,
          log,
        }),
      ]
    : []),
]);
