// Process entry of the sim CSI driver (started by SimCluster as the "sim-csi" component): the
// provisioner, and the kubelets' volume managers for the nodes whose kwok runs (volumes.ts:
// volumesInUse at the node-status cadence, pods mountable on the kubelet's checks).
import { statSync } from "node:fs";
import { parseArgs } from "node:util";
import { loadKubeConfig } from "../../../kube/client.js";
import { runCsiProvisioner } from "../../../kube/csi-provisioner.js";
import { readSimState } from "../boot/state.js";
import { nodeProcessRunningIn } from "../boot/status.js";
import { SimKubeletVolumes } from "./volumes.js";

const { values } = parseArgs({
  options: {
    kubeconfig: { type: "string" },
    driver: { type: "string" },
    state: { type: "string" },
    "status-interval-ms": { type: "string" },
  },
});
if (!values.kubeconfig || !values.driver) {
  process.stderr.write(
    "usage: csi-main --kubeconfig=PATH --driver=NAME [--state=STATE_FILE] [--status-interval-ms=10000]\n",
  );
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
const statusIntervalMs = Number(values["status-interval-ms"] ?? "10000");
if (!Number.isFinite(statusIntervalMs) || statusIntervalMs <= 0) {
  process.stderr.write(
    `csi-main: --status-interval-ms must be a positive number of ms, not ${values["status-interval-ms"]}\n`,
  );
  process.exit(2);
}

/** How long a computed set of live nodes is used while the state file is unchanged. */
const LIVE_NODES_MAX_AGE_MS = 2000;
let live: { version: string; at: number; nodes: Set<string>; ownKwok: Set<string> } | undefined;

/**
 * Nodes whose kwok process runs and is not frozen: the only kubelets that can report anything.
 * Read again when the state file changed (every stop, start, partition and heal rewrites it) or
 * after LIVE_NODES_MAX_AGE_MS (a kwok that died by itself); asked for every pod on a large cluster.
 */
function isLive(node: string): boolean {
  return liveNodes()?.nodes.has(node) ?? false;
}

/**
 * Live nodes with their own kwok report their status at every write (kind-config.yaml's kubelets
 * do); fleet nodes in shared kwoks keep the upstream default, reporting only changes: a thousand
 * heartbeats every 10 s would load the sim's API server as no scenario needs.
 */
function reportsHeartbeat(node: string): boolean {
  return liveNodes()?.ownKwok.has(node) ?? false;
}

function liveNodes(): typeof live {
  if (!stateFile) return undefined;
  const stat = statSync(stateFile, { throwIfNoEntry: false });
  if (!stat) return undefined;
  const version = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  const now = Date.now();
  if (live?.version !== version || now - live.at > LIVE_NODES_MAX_AGE_MS) {
    try {
      const state = readSimState(stateFile);
      const processRunning = nodeProcessRunningIn(state);
      const nodes = state.nodes.filter((n) => n.power === "running" && processRunning(n));
      live = {
        version,
        at: now,
        nodes: new Set(nodes.map((n) => n.name)),
        ownKwok: new Set(nodes.filter((n) => n.group === undefined).map((n) => n.name)),
      };
    } catch {
      return live; // Mid-rename: the last answer.
    }
  }
  return live;
}

const kubelets = stateFile
  ? new SimKubeletVolumes({ kc, driver: values.driver, statusIntervalMs, isLive, reportsHeartbeat, log })
  : undefined;
controller.signal.addEventListener("abort", () => {
  void kubelets?.stop();
});
await Promise.all([
  // The kubelets' part (volumes.ts) marks pods mountable; the provisioner only provisions.
  runCsiProvisioner(kc, { driver: values.driver, signal: controller.signal, log }),
  kubelets?.start(),
]);
