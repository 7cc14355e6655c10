// Test helper process: starts a sim cluster (not detached), prints "READY <runId>", then waits
// to be interrupted. Used to prove Ctrl-C and crashes leave nothing running.
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { SimCluster } from "../../lib/cluster/sim/cluster.js";

const root = process.argv[2];
if (!root) throw new Error("usage: hold-cluster <root>");
const cluster = await SimCluster.start({
  name: "it-hold",
  root,
  workers: 1,
  zones: 1,
  profile: TIMING_PROFILES.fast,
});
process.stdout.write(`READY ${cluster.runId}\n`);
setInterval(() => undefined, 60_000);
